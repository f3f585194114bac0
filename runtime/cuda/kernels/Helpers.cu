//===- runtime/cuda/kernels/Helpers.cu - The library's helper kernels -----===//
//
// The kernels of runtime/cuda/HelperKernels.h: layout changes, triangles,
// diagonals, pointer arrays and info-word summaries around the cuBLAS and cuSOLVER
// calls. Matrices are row-major unless a comment says column-major; `batch` items
// follow each other.
//
//===----------------------------------------------------------------------===//
#include "Common.cuh"

#define FOR_EACH(i, n)                                                                             \
  for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < (n);                                \
       i += (i64)gridDim.x * blockDim.x)

// out = the column-major copy of the rows x cols matrix `in` (block 32 x 8), for
// elements moved as the bits of T.
template <typename T>
__global__ void transpose(i64 batch, i64 rows, i64 cols, const T* in, i64 inStride, T* out,
                          i64 outStride) {
  __shared__ T tile[32][33];
  i64 r0 = blockIdx.y * 32ll, c0 = blockIdx.x * 32ll;
  for (i64 b = blockIdx.z; b < batch; b += gridDim.z) {
    for (int k = threadIdx.y; k < 32; k += blockDim.y)
      if (r0 + k < rows && c0 + threadIdx.x < cols)
        tile[k][threadIdx.x] = in[b * inStride + (r0 + k) * cols + c0 + threadIdx.x];
    __syncthreads();
    for (int k = threadIdx.y; k < 32; k += blockDim.y)
      if (c0 + k < cols && r0 + threadIdx.x < rows)
        out[b * outStride + (c0 + k) * rows + r0 + threadIdx.x] = tile[threadIdx.x][k];
    __syncthreads();
  }
}

// out (rows x cols) = the upper triangle, or with unitLower the unit lower triangle,
// of the column-major matrix `in` with leading dimension ld.
template <typename T>
__global__ void unpackTriangle(i64 batch, i64 rows, i64 cols, const T* in, i64 ld, i64 inStride,
                               T* out, int unitLower) {
  FOR_EACH(t, batch * rows * cols) {
    i64 j = t % cols, i = t / cols % rows, b = t / (rows * cols);
    T v = in[b * inStride + i + j * ld];
    out[t] = unitLower ? (j < i ? v : T(j == i)) : (j >= i ? v : T(0));
  }
}

// Zeroes the strict upper (upperPart) or strict lower triangle of each matrix.
template <typename T>
__global__ void zeroTriangle(i64 batch, i64 rows, i64 cols, T* a, int upperPart) {
  FOR_EACH(t, batch * rows * cols) {
    i64 j = t % cols, i = t / cols % rows;
    if (upperPart ? j > i : j < i)
      a[t] = T(0);
  }
}

// Copies the upper triangle of each n x n matrix onto its lower triangle (block
// 32 x 8): a 32 x 32 tile of the upper part is read by rows into shared memory and
// written by rows into the lower part, so that both sides are coalesced. Nothing
// below the diagonal is read: it may never have been written.
template <typename T> __global__ void mirrorUpper(i64 batch, i64 n, T* a) {
  __shared__ T tile[32][33];
  i64 r0 = blockIdx.y * 32ll, c0 = blockIdx.x * 32ll; // the lower tile written
  if (c0 > r0)
    return;
  for (i64 b = blockIdx.z; b < batch; b += gridDim.z) {
    T* m = a + b * n * n;
    for (int k = threadIdx.y; k < 32; k += blockDim.y) // upper rows c0 + k, columns r0 + x
      if (c0 + k < n && r0 + threadIdx.x < n && r0 + threadIdx.x >= c0 + k)
        tile[k][threadIdx.x] = m[(c0 + k) * n + r0 + threadIdx.x];
    __syncthreads();
    for (int k = threadIdx.y; k < 32; k += blockDim.y) { // lower rows r0 + k, columns c0 + x
      i64 i = r0 + k, j = c0 + threadIdx.x;
      if (i < n && j < i)
        m[i * n + j] = tile[threadIdx.x][k];
    }
    __syncthreads();
  }
}

// a = value everywhere (the source op full).
template <typename T> __global__ void fill(i64 count, double value, T* a) {
  FOR_EACH(t, count) a[t] = T(value);
}

// out = in converted (f32 library calls that run in f64, runWidened in Library.cpp).
template <typename From, typename To> __global__ void convert(i64 count, const From* in, To* out) {
  FOR_EACH(t, count) out[t] = To(in[t]);
}

// Each rows x cols matrix of a = the identity (the source op eye).
template <typename T> __global__ void eye(i64 batch, i64 rows, i64 cols, T* a) {
  FOR_EACH(t, batch * rows * cols) a[t] = T(t % cols == t / cols % rows);
}

template <typename T> __global__ void identity(i64 batch, i64 n, T* a) {
  FOR_EACH(t, batch * n * n) a[t] = T(t % n == t / n % n);
}

// The permutation matrix P of LAPACK pivots (1-based row swaps): A = P L U. Row r
// of P holds its one in column c where perm[c] = r. P must be zeroed.
template <typename T> __global__ void permutation(i64 batch, i64 n, const int* ipiv, T* p) {
  FOR_EACH(t, batch * n) {
    i64 b = t / n, r = t % n, c = r;
    for (i64 k = 0; k < n; ++k) {
      i64 q = ipiv[b * n + k] - 1;
      c = c == k ? q : (c == q ? k : c);
    }
    p[b * n * n + r * n + c] = T(1);
  }
}

// det (or log|det|) from column-major LU factors and pivots, in double. A zero
// pivot makes det 0 and logdet -inf whatever follows it: getrfBatched's factors
// after a zero pivot are not LAPACK's (see refactorSingular).
template <typename T>
__global__ void luDeterminant(i64 batch, i64 n, const T* lu, const int* ipiv, T* out, int logAbs) {
  FOR_EACH(b, batch) {
    double det = 1.0, logdet = 0.0;
    for (i64 i = 0; i < n; ++i) {
      double d = lu[b * n * n + i * n + i];
      det *= ipiv[b * n + i] - 1 != i ? -d : d;
      logdet += log(fabs(d));
      if (d == 0.0)
        break;
    }
    out[b] = T(logAbs ? logdet : det);
  }
}

// LAPACK's unblocked LU (getf2: the first largest pivot; at a zero pivot no swap
// and no scaling, and on to the next column) of the row-major n x n items of `a`
// whose info is nonzero, into column-major `lu` and 1-based `ipiv`. After a zero
// pivot getrfBatched leaves the later multipliers unscaled (seen on an H200 with
// CUDA 13.0), and lu must give LAPACK's factors of singular matrices too. One
// thread per item; items without a zero pivot return at once.
template <typename T>
__global__ void refactorSingular(i64 batch, i64 n, const T* a, T* lu, int* ipiv, const int* info) {
  FOR_EACH(b, batch) {
    if (info[b] == 0)
      continue;
    T* f = lu + b * n * n;
    int* p = ipiv + b * n;
    for (i64 t = 0; t < n * n; ++t)
      f[t / n + t % n * n] = a[b * n * n + t];
    for (i64 j = 0; j < n; ++j) {
      i64 piv = j;
      for (i64 i = j + 1; i < n; ++i)
        if (fabs(double(f[i + j * n])) > fabs(double(f[piv + j * n])))
          piv = i;
      p[j] = int(piv + 1);
      T pivot = f[piv + j * n];
      if (pivot != T(0)) {
        for (i64 c = 0; c < n; ++c) {
          T swap = f[j + c * n];
          f[j + c * n] = f[piv + c * n];
          f[piv + c * n] = swap;
        }
        T reciprocal = T(1) / pivot;
        for (i64 i = j + 1; i < n; ++i)
          f[i + j * n] *= reciprocal;
      }
      for (i64 c = j + 1; c < n; ++c)
        for (i64 i = j + 1; i < n; ++i)
          f[i + c * n] -= f[i + j * n] * f[j + c * n];
    }
  }
}

// Q = the first k columns of H(1) ... H(k), row-major rows x k, from geqrf's
// reflectors: v(i,j) (column-major, leading dimension rows, vStride apart; v(j,j) = 1
// implied) and tau. Column c of Q is H(1) ... H(c+1) e_c, as the later reflectors
// leave e_c alone. One thread per column, updating it in place in q; every thread
// walks the reflectors in the same order, so a warp's loads of v are shared and its
// accesses to q (adjacent columns) coalesce.
template <typename T>
__global__ void householderQ(i64 batch, i64 rows, i64 k, const T* v, i64 vStride, const T* tau,
                             T* q) {
  FOR_EACH(t, batch * k) {
    i64 b = t / k, c = t % k;
    const T* vb = v + b * vStride;
    T* x = q + b * rows * k + c; // x[i * k] = Q(i, c)
    for (i64 i = 0; i < rows; ++i)
      x[i * k] = T(i == c);
    for (i64 j = k - 1; j >= 0; --j) {
      if (j > c)
        continue;
      T s = x[j * k];
      for (i64 i = j + 1; i < rows; ++i)
        s += vb[i + j * rows] * x[i * k];
      s *= tau[b * k + j];
      x[j * k] -= s;
      for (i64 i = j + 1; i < rows; ++i)
        x[i * k] -= s * vb[i + j * rows];
    }
  }
}

// The sum of the diagonal, accumulated in Acc (double for floats, unsigned for
// integers so that overflow wraps).
template <typename T, typename Acc>
__global__ void trace(i64 batch, i64 rows, i64 cols, const T* a, T* out) {
  FOR_EACH(b, batch) {
    Acc acc = 0;
    for (i64 i = 0; i < rows && i < cols; ++i)
      acc += Acc(a[b * rows * cols + i * cols + i]);
    out[b] = T(acc);
  }
}

// info[b] = 1 + the first i with A(i,i) == 0 in matrix b, or 0.
// One thread per diagonal element; info starts at 0 (LibraryContext::run zeroes it).
template <typename T> __global__ void firstZeroDiagonal(i64 batch, i64 n, const T* a, int* info) {
  FOR_EACH(t, batch * n) {
    i64 b = t / n, i = t % n;
    if (a[b * n * n + i * n + i] == T(0)) {
      int want = int(i + 1), old = info[b];
      while (old == 0 || old > want) {
        int seen = atomicCAS(info + b, old, want);
        if (seen == old)
          break;
        old = seen;
      }
    }
  }
}

// Data movement, on elements of T's size whatever their type (DataMovement.h).
// out[outOffset + sum_k c_k out_k] = in[inOffset + sum_k c_k in_k] for every point c
// of `shape`: transpose, slice, diag_part and a concat operand's slab.
struct Strided {
  int rank;
  i64 count, inOffset, outOffset;
  i64 shape[8], in[8], out[8];
};
template <typename T> __global__ void gather(Strided s, const T* in, T* out) {
  FOR_EACH(t, s.count) {
    i64 rest = t, from = s.inOffset, to = s.outOffset;
    for (int k = s.rank - 1; k >= 0; --k) {
      i64 c = rest % s.shape[k];
      rest /= s.shape[k];
      from += c * s.in[k];
      to += c * s.out[k];
    }
    out[to] = in[from];
  }
}

// diag: each n-vector of `in` on the diagonal of an n x n matrix, zeros elsewhere.
template <typename T> __global__ void diagEmbed(i64 count, i64 n, const T* in, T* out) {
  FOR_EACH(t, count) {
    i64 j = t % n, i = t / n % n;
    out[t] = i == j ? in[t / (n * n) * n + i] : T(0);
  }
}

// The first of `count` info words that is not 0, for the host to copy back instead
// of them all: out = ~(b << 32 | info[b]) for the smallest such b, by atomicMax
// over the complements (out is 0 before, and stays 0 when every word is).
extern "C" __global__ void firstFailure(i64 count, const int* info, unsigned long long* out) {
  FOR_EACH(b, count) {
    if (info[b] != 0)
      atomicMax(out, ~((unsigned long long)b << 32 | (unsigned)info[b]));
  }
}

// ptrs[b] = base + b * strideBytes, for the batched library routines.
extern "C" __global__ void pointerArray(i64 batch, char* base, i64 strideBytes, char** ptrs) {
  FOR_EACH(b, batch) ptrs[b] = base + b * strideBytes;
}
