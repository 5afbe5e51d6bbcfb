//go:build tools

// Package tools pins the module's declared dependencies in go.mod so that
// every package can use them without each adding them again.
package tools

import (
	_ "github.com/google/gopacket"
	_ "github.com/google/gopacket/layers"
	_ "github.com/google/gopacket/pcapgo"
	_ "github.com/stretchr/testify/assert"
	_ "pgregory.net/rapid"
)
