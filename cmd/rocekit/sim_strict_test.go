package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A finished run exits 0 whatever its completion statuses; --strict makes
// it exit 1, with one line on stderr, unless every work request completed
// with SUCCESS.
func TestSimStrict(t *testing.T) {
	dead := filepath.Join("..", "..", "roce", "testdata", "dead-link.json") // 9 SUCCESS, 1 RETRY_EXC_ERR, 90 WR_FLUSH_ERR
	code, stdout, stderr := simCLI("sim", "--scenario", dead)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "100 posted, 91 FAILED: RETRY_EXC_ERR 1, WR_FLUSH_ERR 90; SUCCESS 9")
	assert.Empty(t, stderr)

	code, stdout, stderr = simCLI("sim", "--scenario", dead, "--strict")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "91 FAILED")
	assert.Equal(t, "rocekit sim: --strict: 91 of 100 work requests did not complete with SUCCESS\n", stderr)

	code, _, stderr = simCLI("sim", "--scenario", dead, "--strict", "--json")
	assert.Equal(t, 1, code)
	assert.Equal(t, "rocekit sim: --strict: 91 of 100 work requests did not complete with SUCCESS\n", stderr)

	// Stopped before the end: not every WR completed.
	code, _, stderr = simCLI("sim", "--messages", "20", "--loss", "0", "--stop", "50us", "--strict")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "--strict: 20 of 20 work requests did not complete with SUCCESS")

	code, stdout, stderr = simCLI("sim", "--messages", "20", "--strict")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "20 posted, all completed: SUCCESS 20")
	assert.Empty(t, stderr)

	// sim -h documents the flag and its exit status.
	code, stdout, stderr = simCLI("sim", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout+stderr, "-strict")
	assert.Contains(t, stdout+stderr, "or with --strict when a work request did not complete with\nSUCCESS")
}
