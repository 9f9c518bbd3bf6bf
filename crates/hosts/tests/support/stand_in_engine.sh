#!/bin/sh
# A container engine stand-in for tests: `exec [-i] [-t] [-e K=V]… CONTAINER sh -c SCRIPT` runs the
# script on this machine; the container `missing` does not exist (docker's status 1 and message).
[ "$1" = exec ] || exit 125
shift
while :; do
  case $1 in
    -i|-t) shift ;;
    -e) export "$2"; shift 2 ;;
    *) break ;;
  esac
done
if [ "$1" = missing ]; then echo "Error: No such container: $1" >&2; exit 1; fi
shift
exec "$@"
