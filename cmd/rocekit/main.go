// Command rocekit decodes, simulates and generates RoCE and InfiniBand
// traffic. Run `rocekit help` for the subcommands.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand. Each file that implements one registers it in
// an init function, so adding a command touches no other file.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{}

func register(name, summary string, run func(args []string, stdout, stderr io.Writer) int) {
	commands[name] = command{summary, run}
}

func usageText() string {
	var b strings.Builder
	b.WriteString("rocekit: RoCE and InfiniBand traffic toolkit\n\nusage: rocekit <command> [flags] [args]\n\ncommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %-8s %s\n", n, commands[n].summary)
	}
	b.WriteString("  help     show this help, or a command's help: rocekit help decode\n\nRun 'rocekit <command> -h' for a command's flags.\n")
	return b.String()
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText())
		return 2
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) > 2 {
			return usageError(stderr, "", "help: unexpected argument %q", args[2])
		}
		if len(args) > 1 {
			cmd, ok := commands[args[1]]
			if !ok {
				return usageError(stderr, "", "no command %q", args[1])
			}
			return cmd.run([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usageText())
		return 0
	}
	cmd, ok := commands[name]
	if !ok {
		return usageError(stderr, "", "unknown command %q", name)
	}
	return cmd.run(args[1:], stdout, stderr)
}
