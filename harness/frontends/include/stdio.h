/* kata: printf is built into CUDA device code (NVRTC and clang declare it); this header lets
   kernels that include <cstdio> for it compile on both front ends. */
#pragma once
