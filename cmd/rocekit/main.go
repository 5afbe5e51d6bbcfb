// Command rocekit decodes, simulates and generates RoCE and InfiniBand
// traffic. Run `rocekit help` for the subcommands.
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `rocekit: RoCE and InfiniBand traffic toolkit

usage: rocekit <command> [flags] [args]

commands:
  decode   decode capture files (pcap, pcapng, gzip; Ethernet, raw IP, SLL, ERF, InfiniBand)
  help     show this help, or a command's help: rocekit help decode

Run 'rocekit <command> -h' for a command's flags.
`

// commands maps a subcommand name to its entry point. Each returns the
// process exit status.
var commands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"decode": runDecode,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) > 1 {
			if cmd, ok := commands[args[1]]; ok {
				return cmd([]string{"-h"}, stdout, stderr)
			}
		}
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "rocekit: unknown command %q\n\n%s", name, usage)
		return 2
	}
	return cmd(args[1:], stdout, stderr)
}
