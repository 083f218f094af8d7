// Everything is in include/ctgrind.h; SwiftPM needs one source file per C target.
#include "ctgrind.h"
