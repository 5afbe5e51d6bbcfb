package conform

import (
	"io"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// CheckFile checks the capture at path (pcap, pcapng, gzip; "-" is
// standard input) and returns every finding, ordered by frame, and the
// summary. A damaged file returns the findings and summary of the frames
// read before the damage, and the error.
func CheckFile(path string, opts Options) ([]Finding, Summary, error) {
	r, err := pcap.Open(path)
	if err != nil {
		return nil, Summary{}, err
	}
	defer r.Close()
	return CheckReader(r, opts)
}

// CheckReader is CheckFile for an open capture.
func CheckReader(r *pcap.Reader, opts Options) ([]Finding, Summary, error) {
	c := New(opts)
	err := c.ReadAll(r)
	c.Finish(nil)
	return c.Findings(), c.Summary(), err
}

// ReadAll feeds every record of r to the checker (not calling Finish); it
// returns the reader's error, nil at the end of the file.
func (c *Checker) ReadAll(r *pcap.Reader) error {
	var f packet.Frame
	f.Ports = c.opts.Ports
	var scratch []Finding
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		derr := f.DecodeRecord(rec)
		scratch = c.Frame(rec.Index, rec.Time, &f, derr, scratch[:0])
	}
}
