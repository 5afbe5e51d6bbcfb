//go:build !race

package main

// raceBuild: the race detector multiplies the memory a run takes.
const raceBuild = false
