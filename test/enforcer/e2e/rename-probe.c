/* rename-probe <from> <to>: one rename(2), no fallback (busybox mv copies on EXDEV). Prints "OK" or the
 * errno's name (EXDEV, ...) and exits 0; built static into the test image by fanotify-ignore-marks.test.ts. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: rename-probe <from> <to>\n");
    return 2;
  }
  if (rename(argv[1], argv[2]) == 0) {
    puts("OK");
    return 0;
  }
  const char *name = errno == EXDEV ? "EXDEV" : errno == EPERM ? "EPERM" : errno == EACCES ? "EACCES"
                     : errno == EROFS ? "EROFS" : errno == ENOENT ? "ENOENT" : "OTHER";
  printf("%s %s\n", name, strerror(errno));
  return 0;
}
