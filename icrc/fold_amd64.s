#include "textflag.h"

// EDGES sets up fold256 and fold128 (registers as in fold512): SI b, BX
// the number of 64-byte chunks, CX k, DX t, DI the first chunk, R8 and R9
// the shape's or and xor tables at chunk 0, R10 foldK, R12 and R13 the
// lane masks of the first and last chunk in edgeMask.
#define EDGES \
	MOVQ b_base+0(FP), SI \
	MOVQ b_len+8(FP), BX \
	MOVQ s+24(FP), R8 \
	LEAQ ·foldK(SB), R10 \
	LEAQ ·edgeMask(SB), R12 \
	MOVQ SI, CX \
	ANDQ $63, CX \
	MOVQ SI, DI \
	SUBQ CX, DI \
	ADDQ CX, BX \
	MOVQ BX, DX \
	NEGQ DX \
	ANDQ $63, DX \
	ADDQ $63, BX \
	SHRQ $6, BX \
	LEAQ 64(R12)(DX*1), R13 \
	MOVQ $64, AX \
	SUBQ CX, AX \
	ADDQ AX, R12 \
	ADDQ AX, R8 \
	LEAQ 256(R8), R9

// FINISH(V) completes the kernels from V, the XOR of the lanes
// moved onto the last 16 bytes (below degree 96), in SSE form: the top 32
// coefficients folded down by 64 (top32K) leave v, below degree 64, in V's
// high quadword; then Barrett's reduction of v (reflected: bit i is
// x^(63-i)) to v mod P. With Vh its low 32 bits (x^63..x^32) and mu =
// x^64 div P: q = (Vh * mu) div x^32 is the product's low 32 bits, and
// v XOR q*P has the remainder in its top half (barrettK: mu and P, 33 bits
// each, reflected). The result is stored as the function's crc.
#define FINISH(V) \
	MOVQ ·top32K(SB), X7 \
	PCLMULQDQ $0x00, V, X7 \
	PXOR X7, V \
	PSRLDQ $8, V \
	MOVOU ·barrettK(SB), X9 \
	MOVO V, X7 \
	PSLLQ $32, X7 \
	PSRLQ $32, X7 \
	PCLMULQDQ $0x00, X9, X7 \
	PSLLQ $32, X7 \
	PSRLQ $32, X7 \
	PCLMULQDQ $0x10, X9, X7 \
	PXOR V, X7 \
	PEXTRD $1, X7, AX \
	MOVL AX, crc+32(FP)

// func cpuid(eax, ecx uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eax+0(FP), AX
	MOVL ecx+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET

// func xgetbv() (lo, hi uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, lo+0(FP)
	MOVL DX, hi+4(FP)
	RET

// FOLD(K, A, T, NEXT): A = A moved forward by K's distance, XOR NEXT.
#define FOLD(K, A, T, NEXT) \
	VPCLMULQDQ $0x00, K, A, T \
	VPCLMULQDQ $0x11, K, A, A \
	VPTERNLOGQ $0x96, NEXT, T, A

// func fold512(b []byte, s *shape) (lo, hi uint64)
//
// Registers: SI b, BX len(b) then chunk counts, CX k (b's offset in its
// 64-byte line), DX t (trailing pad), DI the next 64-byte chunk of the
// virtual message (b - k to start with, always 64-byte aligned), R8 and R9
// the shape's or and xor tables at chunk 0, R10 foldK, K1 and K3 the lanes
// of the first and last chunk that hold packet bytes.
TEXT ·fold512(SB), NOSPLIT, $0-36
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	MOVQ s+24(FP), R8
	LEAQ ·foldK(SB), R10

	MOVQ SI, CX
	ANDQ $63, CX             // k
	MOVQ SI, DI
	SUBQ CX, DI
	ADDQ CX, BX              // k + len
	MOVQ BX, DX
	NEGQ DX
	ANDQ $63, DX             // t
	ADDQ $63, BX
	SHRQ $6, BX              // chunks
	MOVQ $-1, AX
	SHLQ CX, AX              // lanes k..63
	MOVQ $-1, R11
	XCHGQ CX, DX
	SHRQ CX, R11             // lanes 0..63-t
	XCHGQ CX, DX
	KMOVQ R11, K3
	CMPQ BX, $1
	JNE  first
	ANDQ R11, AX
first:
	KMOVQ AX, K1
	MOVQ $64, AX
	SUBQ CX, AX
	ADDQ AX, R8              // or table at chunk 0
	LEAQ 256(R8), R9         // xor table at chunk 0

	// (data | or) ^ xor is ternary-logic function 0x56. The mask covers at
	// most 73 bytes of b, so it can reach chunk 2, never chunk 3.
	VMOVDQU8.Z (DI), K1, Z0
	VMOVDQU64 (R8), Z16
	VPTERNLOGQ $0x56, (R9), Z16, Z0
	CMPQ BX, $1
	JE   reduce
	VMOVDQU64 192(R10), Z23  // fold by 64 bytes
	CMPQ BX, $4
	JBE  small

	// Four accumulators, 256 bytes a step, over every chunk but the last.
	VMOVDQU64 64(DI), Z1
	VMOVDQU64 64(R8), Z16
	VPTERNLOGQ $0x56, 64(R9), Z16, Z1
	VMOVDQU64 128(DI), Z2
	VMOVDQU64 128(R8), Z16
	VPTERNLOGQ $0x56, 128(R9), Z16, Z2
	VMOVDQU64 192(DI), Z3
	ADDQ $256, DI
	SUBQ $5, BX              // full chunks left before the last
	VMOVDQU64 (R10), Z20     // fold by 256 bytes

loop4:
	CMPQ BX, $4
	JB   join4
	FOLD(Z20, Z0, Z4, (DI))
	FOLD(Z20, Z1, Z5, 64(DI))
	FOLD(Z20, Z2, Z6, 128(DI))
	FOLD(Z20, Z3, Z7, 192(DI))
	ADDQ $256, DI
	SUBQ $4, BX
	JMP  loop4

join4:
	VMOVDQU64 64(R10), Z21   // 192 bytes
	VMOVDQU64 128(R10), Z22  // 128 bytes
	FOLD(Z21, Z0, Z4, Z3)
	FOLD(Z22, Z1, Z5, Z0)
	FOLD(Z23, Z2, Z6, Z1)
	VMOVDQA64 Z2, Z0

tail:
	TESTQ BX, BX
	JZ    last
	FOLD(Z23, Z0, Z4, (DI))
	ADDQ $64, DI
	DECQ BX
	JMP  tail

last:
	VMOVDQU8.Z (DI), K3, Z1
	FOLD(Z23, Z0, Z4, Z1)
	JMP  reduce

small:
	// Two to four chunks; chunks 1 and 2 may still be masked, and the last
	// is read only as far as b goes.
	CMPQ BX, $2
	JNE  small3
	VMOVDQU8.Z 64(DI), K3, Z1
	VMOVDQU64 64(R8), Z16
	VPTERNLOGQ $0x56, 64(R9), Z16, Z1
	FOLD(Z23, Z0, Z4, Z1)
	JMP  reduce

small3:
	VMOVDQU64 64(DI), Z1
	VMOVDQU64 64(R8), Z16
	VPTERNLOGQ $0x56, 64(R9), Z16, Z1
	FOLD(Z23, Z0, Z4, Z1)
	CMPQ BX, $3
	JNE  small4
	VMOVDQU8.Z 128(DI), K3, Z1
	VMOVDQU64 128(R8), Z16
	VPTERNLOGQ $0x56, 128(R9), Z16, Z1
	FOLD(Z23, Z0, Z4, Z1)
	JMP  reduce

small4:
	VMOVDQU64 128(DI), Z1
	VMOVDQU64 128(R8), Z16
	VPTERNLOGQ $0x56, 128(R9), Z16, Z1
	FOLD(Z23, Z0, Z4, Z1)
	VMOVDQU8.Z 192(DI), K3, Z1
	FOLD(Z23, Z0, Z4, Z1)

reduce:
	// Lanes moved onto the last 16 bytes, the trailing pad divided out and
	// x^32 multiplied in (reduceK[t]), then XORed together: below degree 96.
	LEAQ ·reduceK(SB), R11
	SHLQ $6, DX
	VMOVDQU64 (R11)(DX*1), Z21
	VPCLMULQDQ $0x00, Z21, Z0, Z4
	VPCLMULQDQ $0x11, Z21, Z0, Z5
	VPXORQ Z4, Z5, Z6
	VEXTRACTI64X4 $1, Z6, Y7
	VPXOR Y7, Y6, Y6
	VEXTRACTI128 $1, Y6, X7
	VPXOR X7, X6, X6
	VZEROUPPER
	FINISH(X6)
	RET

// The AVX2 kernel: the same virtual message, 64-byte chunks and constants
// as fold512, each 512-bit register a pair of 256-bit ones (L: bytes 0-31,
// H: bytes 32-63). AVX2 has no byte-masked loads, so the first and last
// chunks are read whole (an aligned 64-byte block never crosses a page,
// so the bytes around b that it reads are mapped) and ANDed with a lane
// mask from edgeMask.

// FOLD2(K, L, H, TL, TH, NL, NH): L:H = L:H moved forward by K's distance,
// XOR NL:NH.
#define FOLD2(K, L, H, TL, TH, NL, NH) \
	VPCLMULQDQ $0x00, K, L, TL \
	VPCLMULQDQ $0x11, K, L, L \
	VPCLMULQDQ $0x00, K, H, TH \
	VPCLMULQDQ $0x11, K, H, H \
	VPXOR TL, L, L \
	VPXOR TH, H, H \
	VPXOR NL, L, L \
	VPXOR NH, H, H

// SHAPE2(OFF, L, H): the shape's or, then xor, tables at chunk offset OFF
// applied to L:H.
#define SHAPE2(OFF, L, H) \
	VPOR OFF(R8), L, L \
	VPOR OFF+32(R8), H, H \
	VPXOR OFF(R9), L, L \
	VPXOR OFF+32(R9), H, H

// func fold256(b []byte, s *shape) (crc uint32)
//
// Registers as in fold512, and R12 and R13 the lane masks of the first and
// last chunk; Y0-Y7 four accumulators, Y8-Y11 the fold constants for 256,
// 192, 128 and 64 bytes (one 128-bit lane pair, the same in every lane).
TEXT ·fold256(SB), NOSPLIT, $0-36
	EDGES

	VMOVDQU (R12), Y14
	VMOVDQU 32(R12), Y15
	CMPQ BX, $1
	JNE  first2
	VPAND (R13), Y14, Y14
	VPAND 32(R13), Y15, Y15

first2:
	VPAND (DI), Y14, Y0
	VPAND 32(DI), Y15, Y1
	SHAPE2(0, Y0, Y1)
	CMPQ BX, $1
	JE   reduce2
	VMOVDQU 192(R10), Y11    // fold by 64 bytes
	CMPQ BX, $4
	JBE  small2

	VMOVDQA 64(DI), Y2
	VMOVDQA 96(DI), Y3
	SHAPE2(64, Y2, Y3)
	VMOVDQA 128(DI), Y4
	VMOVDQA 160(DI), Y5
	SHAPE2(128, Y4, Y5)
	VMOVDQA 192(DI), Y6
	VMOVDQA 224(DI), Y7
	ADDQ $256, DI
	SUBQ $5, BX              // full chunks left before the last
	VMOVDQU (R10), Y8        // fold by 256 bytes

loop2:
	CMPQ BX, $4
	JB   join2
	FOLD2(Y8, Y0, Y1, Y12, Y13, (DI), 32(DI))
	FOLD2(Y8, Y2, Y3, Y14, Y15, 64(DI), 96(DI))
	FOLD2(Y8, Y4, Y5, Y12, Y13, 128(DI), 160(DI))
	FOLD2(Y8, Y6, Y7, Y14, Y15, 192(DI), 224(DI))
	ADDQ $256, DI
	SUBQ $4, BX
	JMP  loop2

join2:
	VMOVDQU 64(R10), Y9      // 192 bytes
	VMOVDQU 128(R10), Y10    // 128 bytes
	FOLD2(Y9, Y0, Y1, Y12, Y13, Y6, Y7)
	FOLD2(Y10, Y2, Y3, Y12, Y13, Y0, Y1)
	FOLD2(Y11, Y4, Y5, Y12, Y13, Y2, Y3)
	VMOVDQA Y4, Y0
	VMOVDQA Y5, Y1

tail2:
	TESTQ BX, BX
	JZ    last2
	FOLD2(Y11, Y0, Y1, Y12, Y13, (DI), 32(DI))
	ADDQ  $64, DI
	DECQ  BX
	JMP   tail2

last2:
	VMOVDQU (R13), Y2
	VMOVDQU 32(R13), Y3
	VPAND (DI), Y2, Y2
	VPAND 32(DI), Y3, Y3
	FOLD2(Y11, Y0, Y1, Y12, Y13, Y2, Y3)
	JMP  reduce2

small2:
	// Two to four chunks; chunks 1 and 2 may still be masked, and the last
	// is cut to b's end.
	VMOVDQU (R13), Y14
	VMOVDQU 32(R13), Y15
	CMPQ BX, $2
	JNE  small23
	VPAND 64(DI), Y14, Y2
	VPAND 96(DI), Y15, Y3
	SHAPE2(64, Y2, Y3)
	FOLD2(Y11, Y0, Y1, Y12, Y13, Y2, Y3)
	JMP  reduce2

small23:
	VMOVDQA 64(DI), Y2
	VMOVDQA 96(DI), Y3
	SHAPE2(64, Y2, Y3)
	FOLD2(Y11, Y0, Y1, Y12, Y13, Y2, Y3)
	CMPQ BX, $3
	JNE  small24
	VPAND 128(DI), Y14, Y2
	VPAND 160(DI), Y15, Y3
	SHAPE2(128, Y2, Y3)
	FOLD2(Y11, Y0, Y1, Y12, Y13, Y2, Y3)
	JMP  reduce2

small24:
	VMOVDQA 128(DI), Y2
	VMOVDQA 160(DI), Y3
	SHAPE2(128, Y2, Y3)
	FOLD2(Y11, Y0, Y1, Y12, Y13, Y2, Y3)
	VPAND 192(DI), Y14, Y2
	VPAND 224(DI), Y15, Y3
	FOLD2(Y11, Y0, Y1, Y12, Y13, Y2, Y3)

reduce2:
	// As in fold512: lanes 0-1 (Y0) and 2-3 (Y1) moved onto the last 16
	// bytes with the pad divided out and x^32 multiplied in, XORed
	// together; then FINISH.
	LEAQ ·reduceK(SB), R11
	SHLQ $6, DX
	VMOVDQU (R11)(DX*1), Y12
	VMOVDQU 32(R11)(DX*1), Y13
	VPCLMULQDQ $0x00, Y12, Y0, Y2
	VPCLMULQDQ $0x11, Y12, Y0, Y3
	VPCLMULQDQ $0x00, Y13, Y1, Y4
	VPCLMULQDQ $0x11, Y13, Y1, Y5
	VPXOR Y2, Y3, Y2
	VPXOR Y4, Y5, Y4
	VPXOR Y2, Y4, Y6
	VEXTRACTI128 $1, Y6, X7
	VPXOR X7, X6, X6
	VZEROUPPER               // before SSE instructions: X6 is all that is left
	FINISH(X6)
	RET

// The SSE kernel, for x86-64 CPUs with PCLMULQDQ and SSE4.1 but neither
// vector kernel above (Intel before Ice Lake and Alder Lake, AMD before Zen
// 3): the same virtual message and constants, each 64-byte chunk in four
// 128-bit registers, one accumulator folded forward a chunk at a time (the
// four lanes are four independent chains), the edge blocks read whole and
// masked as in fold256. Legacy SSE memory operands must be 16-byte aligned,
// which the chunks are and the tables are not, so tables are loaded with
// MOVOU first.

// FOLD1(L, T, N): lane L moved forward by 64 bytes (X8), XOR N.
#define FOLD1(L, T, N) \
	MOVO L, T \
	PCLMULQDQ $0x00, X8, T \
	PCLMULQDQ $0x11, X8, L \
	PXOR T, L \
	PXOR N, L

// LOAD1(OFF): X9-X12 = the chunk at OFF(DI).
#define LOAD1(OFF) \
	MOVO OFF(DI), X9 \
	MOVO OFF+16(DI), X10 \
	MOVO OFF+32(DI), X11 \
	MOVO OFF+48(DI), X12

// MASK1(M, X): X ANDed with the lane mask at M.
#define MASK1(M, X) \
	MOVOU M, X15 \
	PAND X15, X

// SHAPE1(OFF, X): the shape's or, then xor, tables at OFF applied to X.
#define SHAPE1(OFF, X) \
	MOVOU OFF(R8), X13 \
	POR X13, X \
	MOVOU OFF(R9), X13 \
	PXOR X13, X

// func fold128(b []byte, s *shape) (crc uint32)
//
// Registers as in fold256, with R8 and R9 advanced with DI while chunks 1
// and 2 may still be masked, AX the index of the chunk at DI and R11 that
// of the last; X0-X3 the accumulator, X8 the fold-by-64 constant.
TEXT ·fold128(SB), NOSPLIT, $0-36
	EDGES

	MOVO (DI), X0
	MOVO 16(DI), X1
	MOVO 32(DI), X2
	MOVO 48(DI), X3
	MASK1((R12), X0)
	MASK1(16(R12), X1)
	MASK1(32(R12), X2)
	MASK1(48(R12), X3)
	CMPQ BX, $1
	JNE  first1
	MASK1((R13), X0)
	MASK1(16(R13), X1)
	MASK1(32(R13), X2)
	MASK1(48(R13), X3)

first1:
	SHAPE1(0, X0)
	SHAPE1(16, X1)
	SHAPE1(32, X2)
	SHAPE1(48, X3)
	CMPQ BX, $1
	JE   reduce1
	MOVOU 192(R10), X8       // fold by 64 bytes
	MOVQ BX, R11
	DECQ R11                 // the last chunk
	MOVQ $1, AX
	ADDQ $64, DI
	ADDQ $64, R8
	ADDQ $64, R9

shaped1:
	// Chunks 1 and 2, unless last: the mask may reach them.
	CMPQ AX, R11
	JAE  last1
	CMPQ AX, $2
	JA   plain1
	LOAD1(0)
	SHAPE1(0, X9)
	SHAPE1(16, X10)
	SHAPE1(32, X11)
	SHAPE1(48, X12)
	FOLD1(X0, X4, X9)
	FOLD1(X1, X5, X10)
	FOLD1(X2, X6, X11)
	FOLD1(X3, X7, X12)
	ADDQ $64, DI
	ADDQ $64, R8
	ADDQ $64, R9
	INCQ AX
	JMP  shaped1

plain1:
	CMPQ AX, R11
	JAE  last1
	FOLD1(X0, X4, (DI))
	FOLD1(X1, X5, 16(DI))
	FOLD1(X2, X6, 32(DI))
	FOLD1(X3, X7, 48(DI))
	ADDQ $64, DI
	INCQ AX
	JMP  plain1

last1:
	LOAD1(0)
	MASK1((R13), X9)
	MASK1(16(R13), X10)
	MASK1(32(R13), X11)
	MASK1(48(R13), X12)
	CMPQ AX, $2
	JA   lastfold1
	SHAPE1(0, X9)
	SHAPE1(16, X10)
	SHAPE1(32, X11)
	SHAPE1(48, X12)

lastfold1:
	FOLD1(X0, X4, X9)
	FOLD1(X1, X5, X10)
	FOLD1(X2, X6, X11)
	FOLD1(X3, X7, X12)

reduce1:
	// As in fold256: the four lanes moved onto the last 16 bytes with the
	// pad divided out and x^32 multiplied in, XORed; then FINISH.
	LEAQ ·reduceK(SB), R11
	SHLQ $6, DX
	ADDQ DX, R11
	MOVOU (R11), X9
	MOVOU 16(R11), X10
	MOVOU 32(R11), X11
	MOVOU 48(R11), X12
	MOVO X0, X4
	PCLMULQDQ $0x00, X9, X4
	PCLMULQDQ $0x11, X9, X0
	MOVO X1, X5
	PCLMULQDQ $0x00, X10, X5
	PCLMULQDQ $0x11, X10, X1
	MOVO X2, X6
	PCLMULQDQ $0x00, X11, X6
	PCLMULQDQ $0x11, X11, X2
	MOVO X3, X7
	PCLMULQDQ $0x00, X12, X7
	PCLMULQDQ $0x11, X12, X3
	PXOR X4, X0
	PXOR X5, X1
	PXOR X6, X2
	PXOR X7, X3
	PXOR X1, X0
	PXOR X3, X2
	PXOR X2, X0
	FINISH(X0)
	RET
