package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"

	"github.com/rocekit/rocekit/conform"
)

const checkUsage = `usage: rocekit check [--format text|json] [--pmtu N] [--port LIST] CAPTURE...

Replay each capture (pcap, pcapng, either gzip-compressed; "-" is standard
input) per RC connection and report every departure from the RC rules of
ib-facts.md §5 that the capture proves: one line per finding,

  frame N: §5.4 nak_psn: <what happened>; expected <what the rule wants>

then one summary line per connection and a total. Connections are learnt
from CM REQ/REP exchanges, else by pairing responses with the requests whose
PSNs they name; when the requests of several QPs fit, the pairing is
ambiguous and those responses are not judged. Several files are checked one
by one.

A capture is a window: a request still awaiting its answer when the capture
ends (an AckReq request no ACK or NAK covers, a READ without its last
response, an atomic without its ATOMIC ACK) is outstanding, not a finding.
The summary line of its connection names the oldest per direction ("1
outstanding from OPCODE PSN 0x... at frame N") and the total line counts
them. A missing answer is a finding (missing_ack) only when the capture
proves it: the responder answered a later PSN while a READ or atomic before
it never got its own response (§5.4: the responder answers in PSN order; a
later ACK covers an earlier SEND or WRITE, ACKs coalesce), and the capture
is known to sit at the responder (requests were seen lost before it, never
after it), so no loss before the capture point explains the missing answer.

With --format json each finding is one JSON object per line, keys in this
order: type ("finding"), file, frame, rule, kind, message, expected, got,
connection (its number in the summary, 0 for none). Then one object per file:
type ("summary"), file, frames, ib_frames, rc_frames, findings, outstanding,
counts (every kind, in the order below), connections (connection, encap, a,
qp_a, b, qp_b, paired_by, pmtu, pmtu_from, first_frame, last_frame, packets,
findings, error_frame, a_to_b, b_to_a; a channel has started, first_psn,
next_psn, acked_psn, requests, retransmitted, go_backs, missing_psns, acks,
naks, rnr_naks, read_responses, atomic_acks, outstanding, outstanding_psn,
outstanding_frame, outstanding_op: the oldest outstanding request, 0 and ""
when none), and error when the file could not be read to the end.

Finding kinds: bad_icrc §3, bad_vcrc §3.3, malformed §1, tver §5.11,
pkey_mismatch §5.11, opcode_sequence §5.6, payload_size §5.2, pad_count §5.2,
psn_reuse §5.3, read_psn_reservation §5.3, bad_retransmission §5.5,
nak_code §5.6, nak_psn §5.4, ack_psn §5.3, missing_ack §5.2,
read_response §5.3, msn §5.9.

Exit status: 0 when every capture is clean (outstanding requests are no
findings), 1 when anything was found or a file could not be read to the end,
2 for usage errors.

flags:
`

func init() {
	register("check", "check RC traffic in captures against the spec (NAKs, ACKs, go-back-N, PSNs, READs, sizes)", runCheck)
}

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	format := fs.String("format", "text", "output format: text, or json (one object per finding, NDJSON, then a summary object)")
	pmtu := fs.Int("pmtu", 0, "path MTU in bytes (256, 512, 1024, 2048 or 4096) to check against; 0: from CM, else learnt from full-size packets")
	ports := fs.String("port", "", "extra UDP destination ports to decode as RoCEv2, comma-separated (4791 always is; default: none)")
	files, code, ok := parseArgs(fs, checkUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		return usageError(stderr, "check", "--format %q: want text or json", *format)
	}
	if *pmtu != 0 && *pmtu != 256 && *pmtu != 512 && *pmtu != 1024 && *pmtu != 2048 && *pmtu != 4096 {
		return usageError(stderr, "check", "--pmtu %d: want 256, 512, 1024, 2048 or 4096", *pmtu)
	}
	portList, err := parsePorts(*ports)
	if err != nil {
		return usageError(stderr, "check", "%v", err)
	}
	if len(files) == 0 {
		return usageError(stderr, "check", "no capture file given")
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	defer out.Flush()
	opts := conform.Options{PMTU: *pmtu, Ports: portList}
	status := 0
	var b []byte
	for _, name := range files {
		findings, sum, err := conform.CheckFile(name, opts)
		if len(findings) > 0 {
			status = 1
		}
		b = b[:0]
		for _, f := range findings {
			if *format == "json" {
				b = chkFindingJSON(b, name, f)
			} else {
				if len(files) > 1 {
					b = append(b, name...)
					b = append(b, ": "...)
				}
				b = f.AppendText(b)
			}
			b = append(b, '\n')
		}
		switch {
		case *format == "json":
			b = chkSummaryJSON(b, name, &sum, err)
		case err != nil && sum.Frames == 0:
			// Not a capture (or not there): no summary to give.
		default:
			if len(files) > 1 {
				b = append(b, "== "...)
				b = append(b, name...)
				b = append(b, '\n')
			}
			b = sum.AppendText(b)
		}
		out.Write(b)
		if err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "rocekit check: %s: %v\n", name, err)
			status = 1
		}
	}
	return status
}

// chkFindingJSON is Finding.AppendJSON with the file name after "type".
func chkFindingJSON(b []byte, file string, f conform.Finding) []byte {
	return chkWithFile(b, f.AppendJSON, file)
}

// chkSummaryJSON is Summary.AppendJSON with "file" after "type" and,
// for a damaged file, "error" at the end.
func chkSummaryJSON(b []byte, file string, s *conform.Summary, err error) []byte {
	b = chkWithFile(b, s.AppendJSON, file)
	if err != nil {
		b = b[:len(b)-1]
		b = append(b, `,"error":`...)
		b = appendJSONString(b, err.Error())
		b = append(b, '}')
	}
	return append(b, '\n')
}

// chkWithFile appends the object app writes, with "file":NAME inserted after
// its first key ("type").
func chkWithFile(b []byte, app func([]byte) []byte, file string) []byte {
	start := len(b)
	b = app(b)
	obj := string(b[start:])
	// The object starts {"type":"...", : insert after the type's value.
	i := len(`{"type":"`)
	for i < len(obj) && obj[i] != '"' {
		i++
	}
	i++ // past the closing quote
	b = append(b[:start], obj[:i]...)
	b = append(b, `,"file":`...)
	b = appendJSONString(b, file)
	return append(b, obj[i:]...)
}
