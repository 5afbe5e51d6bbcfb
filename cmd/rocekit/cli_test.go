package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Help goes to standard output with exit status 0, however it is asked
// for, so that `rocekit decode -h | less` shows it.
func TestHelpGoesToStdout(t *testing.T) {
	for _, name := range []string{"decode", "sim", "gen", "check", "version"} {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			code, out, errs := simCLI(args...)
			assert.Equal(t, 0, code, "%v", args)
			assert.True(t, strings.HasPrefix(out, "usage: rocekit "+name), "%v: %q", args, out)
			assert.Empty(t, errs, "%v", args)
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, errs := simCLI(args...)
		assert.Equal(t, 0, code, "%v", args)
		assert.Contains(t, out, "usage: rocekit <command>", "%v", args)
		assert.Empty(t, errs, "%v", args)
	}
}

// A usage error is one line naming the flag and the problem, then where
// the help is, with exit status 2; the usage itself is not printed.
func TestUsageErrorsAreTwoLines(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--loss", "abc"}, `rocekit sim: invalid value "abc" for flag --loss: parse error` + "\n" +
			"run 'rocekit sim -h' for usage\n"},
		{[]string{"gen", "-o", "x", "--fault", "bogus"}, `rocekit gen: invalid value "bogus" for flag --fault: `},
		{[]string{"decode", "--bogus", "x.pcap"}, "rocekit decode: flag provided but not defined: --bogus\n" +
			"run 'rocekit decode -h' for usage\n"},
		{[]string{"decode", "-v=maybe", "x.pcap"}, `rocekit decode: invalid boolean value "maybe" for -v: parse error` + "\n" +
			"run 'rocekit decode -h' for usage\n"},
		{[]string{"gen", "-o"}, "rocekit gen: flag needs an argument: -o\nrun 'rocekit gen -h' for usage\n"},
		{[]string{"check"}, "rocekit check: no capture file given\nrun 'rocekit check -h' for usage\n"},
		{[]string{"decode", "--format", "xml", "x.pcap"}, "rocekit decode: --format \"xml\": want text or json\n" +
			"run 'rocekit decode -h' for usage\n"},
		{[]string{"sim", "--snaplen", "-1"}, "rocekit sim: --snaplen -1: want 0 or more\nrun 'rocekit sim -h' for usage\n"},
		{[]string{"version", "extra"}, "rocekit version: unexpected argument \"extra\"\nrun 'rocekit version -h' for usage\n"},
		{[]string{"nosuch"}, "rocekit: unknown command \"nosuch\"\nrun 'rocekit help' for usage\n"},
		{[]string{"help", "nosuch"}, "rocekit: no command \"nosuch\"\nrun 'rocekit help' for usage\n"},
	} {
		code, out, errs := simCLI(c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Empty(t, out, "%v", c.args)
		assert.Equal(t, 2, strings.Count(errs, "\n"), "%v: %q", c.args, errs)
		assert.True(t, strings.HasPrefix(errs, c.want), "%v: %q", c.args, errs)
		hint := "rocekit help"
		if _, ok := commands[c.args[0]]; ok {
			hint = "rocekit " + c.args[0] + " -h"
		}
		assert.True(t, strings.HasSuffix(errs, "\nrun '"+hint+"' for usage\n"), "%v: %q", c.args, errs)
	}
}

// Every flag of every command shows its default in the help.
func TestEveryFlagShowsDefault(t *testing.T) {
	flagLine := regexp.MustCompile(`^  (-\w|--[\w-]+)( \S+)?$`)
	for _, name := range []string{"decode", "sim", "gen", "check"} {
		_, out, _ := simCLI(name, "-h")
		lines := strings.Split(out, "\n")
		n := 0
		for i, l := range lines {
			if !flagLine.MatchString(l) {
				continue
			}
			n++
			if assert.Less(t, i+1, len(lines)) {
				assert.Contains(t, lines[i+1], "default", "%s %s", name, l)
				assert.NotContains(t, lines[i+1], `(default "")`, "%s %s", name, l)
			}
		}
		assert.Greater(t, n, 2, "%s: flags listed", name)
	}
	// sim's defaults are the built-in scenario's.
	_, out, _ := simCLI("sim", "-h")
	assert.Contains(t, out, "  --loss p\n    \tloss probability p per frame on every link, both directions (replaces the scenario's) (default 0.01)\n")
	assert.Contains(t, out, "  --bandwidth Gb/s\n    \trate of every link in Gb/s (default 100)\n")
}
