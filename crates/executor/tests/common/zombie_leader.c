/* zombie_leader [--setsid] SECONDS
 *
 * Leaves a process whose main thread has exited while a second thread lives on: the second thread
 * starts `sleep SECONDS` and then waits forever, and the main thread exits once it has. The process
 * then reads as a zombie in /proc/<pid>/stat, and its own environ, cmdline and fd entries cannot be
 * read, while it and its child run on. With --setsid it first leaves the caller's session.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *seconds;
static int ready[2];

static void *second_thread(void *unused) {
    (void)unused;
    pid_t child = fork();
    if (child == 0) {
        execlp("sleep", "sleep", seconds, (char *)0);
        _exit(127);
    }
    char byte = 1;
    if (child < 0 || write(ready[1], &byte, 1) != 1)
        _exit(1);
    for (;;)
        pause();
    return 0;
}

int main(int argc, char **argv) {
    int arg = 1;
    if (arg < argc && strcmp(argv[arg], "--setsid") == 0) {
        if (setsid() < 0)
            return 1;
        arg++;
    }
    if (arg + 1 != argc)
        return 2;
    seconds = argv[arg];
    pthread_t thread;
    if (pipe(ready) != 0 || pthread_create(&thread, 0, second_thread, 0) != 0)
        return 1;
    char byte;
    if (read(ready[0], &byte, 1) != 1)
        return 1;
    pthread_exit(0);
}
