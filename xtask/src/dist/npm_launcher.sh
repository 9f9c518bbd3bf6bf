#!/bin/sh
# shellgate's npm launcher: finds the binary of this machine's platform package and replaces itself
# with it (exec), so no launcher process stays behind as the engine's parent, holding the client's
# environment. SHELLGATE_LAUNCHER tells the engine the path this script was started by (a link in
# node_modules/.bin), this package and the platform package; the engine keeps them read-only in every
# sandbox, like its own executable, so no command can point the next start elsewhere.
self=$(readlink -f -- "$0") || exit 1
package=${self%/*/*}
case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) platform=linux-x64 ;;
    Linux-aarch64 | Linux-arm64) platform=linux-arm64 ;;
    *)
        echo "shellgate: no prebuilt binary for $(uname -s) $(uname -m); build it with cargo install shellgate-cli" >&2
        exit 1
        ;;
esac
# Nested (npm without hoisting) or beside this package (npm, pnpm and yarn's node_modules layouts).
for dir in "$package/node_modules/@shellgate/$platform" "${package%/*}/@shellgate/$platform"; do
    if [ -x "$dir/bin/shellgate" ]; then
        SHELLGATE_LAUNCHER=$0:$package:$dir
        export SHELLGATE_LAUNCHER
        exec "$dir/bin/shellgate" "$@"
    fi
done
echo "shellgate: the package @shellgate/$platform is missing (was it installed with --omit=optional?)" >&2
exit 1
