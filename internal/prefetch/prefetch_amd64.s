#include "textflag.h"

// func lines(p uintptr, n int)
TEXT ·lines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
done:
	RET

// func linesL2(p uintptr, n int)
TEXT ·linesL2(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	PREFETCHT1 (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
done:
	RET
