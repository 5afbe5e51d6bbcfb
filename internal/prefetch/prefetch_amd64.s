#include "textflag.h"

// LINES(INSTR) issues INSTR for n lines from p (arguments p, n).
#define LINES(INSTR) \
	MOVQ p+0(FP), AX \
	MOVQ n+8(FP), CX \
	TESTQ CX, CX \
	JLE done \
loop: \
	INSTR (AX) \
	ADDQ $64, AX \
	DECQ CX \
	JNZ loop \
done: \
	RET

// func lines(p uintptr, n int)
TEXT ·lines(SB), NOSPLIT, $0-16
	LINES(PREFETCHT0)

// func linesL2(p uintptr, n int)
TEXT ·linesL2(SB), NOSPLIT, $0-16
	LINES(PREFETCHT1)
