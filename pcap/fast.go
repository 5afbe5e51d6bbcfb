package pcap

import "github.com/rocekit/rocekit/internal/pcapfast"

// The Reader's speed methods, for package decode (internal/pcapfast says
// what each is for and the figures that keep it).
func init() {
	pcapfast.Set(pcapfast.Methods[*Reader, *Record]{
		CopyIsFaster:     (*Reader).copyIsFaster,
		CallerReadsAhead: (*Reader).callerReadsAhead,
		ReadAhead:        (*Reader).readAhead,
		Ahead:            (*Reader).ahead,
		CopyAt:           (*Reader).copyAt,
		SkimFrom:         (*Reader).skimFrom,
		RecordFrom:       (*Reader).recordFrom,
	})
}
