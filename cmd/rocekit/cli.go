package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
)

// The conventions every subcommand follows, as the go tool does: help
// (-h, --help, rocekit help CMD) goes to standard output with exit status
// 0; a usage error is one line on standard error naming the flag and the
// problem, then a pointer to the help, with exit status 2.

// parseArgs parses args with fs, letting flags follow the operands as
// tcpdump and tshark users type them. usage is the command's text before
// its flags. ok is false when the command is over: after the help
// (code 0) or a bad flag (code 2).
func parseArgs(fs *flag.FlagSet, usage string, args []string, stdout, stderr io.Writer) (rest []string, code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(stdout, fs, usage)
				return nil, 0, false
			}
			return nil, usageError(stderr, fs.Name(), "%s", dashFlags(err.Error())), false
		}
		args = fs.Args()
		if len(args) == 0 {
			return rest, 0, true
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

// usageError reports a usage error of command cmd ("" for rocekit itself)
// and returns its exit status, 2.
func usageError(stderr io.Writer, cmd, format string, a ...any) int {
	name, help := "rocekit", "rocekit help"
	if cmd != "" {
		name += " " + cmd
		help = name + " -h"
	}
	fmt.Fprintf(stderr, "%s: %s\nrun '%s' for usage\n", name, fmt.Sprintf(format, a...), help)
	return 2
}

// flagName is a flag as users write it: -v, --loss.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagInMessage finds the flag names in the flag package's errors
// ("invalid value "x" for flag -loss", "flag provided but not defined:
// -bogus", "flag needs an argument: -o").
var flagInMessage = regexp.MustCompile(`(flag |for |argument: |defined: )-([A-Za-z0-9][-A-Za-z0-9_]*)`)

// dashFlags rewrites the flag names in a flag package error the way users
// write them.
func dashFlags(msg string) string {
	return flagInMessage.ReplaceAllStringFunc(msg, func(m string) string {
		sub := flagInMessage.FindStringSubmatch(m)
		return sub[1] + flagName(sub[2])
	})
}

// printUsage writes the command's text and then every flag with its
// argument, its description and its default.
func printUsage(w io.Writer, fs *flag.FlagSet, usage string) {
	var b strings.Builder
	b.WriteString(usage)
	fs.VisitAll(func(f *flag.Flag) {
		arg, text := flag.UnquoteUsage(f)
		b.WriteString("  " + flagName(f.Name))
		if arg != "" {
			b.WriteString(" " + arg)
		}
		b.WriteString("\n    \t" + strings.ReplaceAll(text, "\n", "\n    \t"))
		if !strings.Contains(text, "default") {
			b.WriteString(" (default " + defaultText(f) + ")")
		}
		b.WriteString("\n")
	})
	io.WriteString(w, b.String())
}

// defaultText is a flag's default as the user would write it: strings
// quoted, an empty one as "".
func defaultText(f *flag.Flag) string {
	if t := reflect.TypeOf(f.Value); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.String {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}
