package roce

import (
	"runtime"
	"syscall"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used. The
// benchmarks lock their goroutine to its thread and report CPU time beside
// wall time, because the machine they run on is shared and wall time
// includes the time other processes took.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
