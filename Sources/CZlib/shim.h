#ifndef CZLIB_SHIM_H
#define CZLIB_SHIM_H

// zlib, the system's: its crc32 is the checksum S3 takes of each part (x-amz-checksum-crc32).
#include <zlib.h>

#endif
