// Package pcap reads and writes capture files: classic pcap (microsecond and
// nanosecond, either byte order), pcapng (several sections, several
// interfaces, EPB/SPB/PB packets) and gzip-compressed files of either.
//
// The package knows capture formats and link layers, nothing about
// InfiniBand transport headers: Network strips the link-layer encapsulation
// (Ethernet, raw IP, Linux SLL/SLL2, ERF, LINKTYPE_INFINIBAND) and says what
// the remaining bytes start with, and a later layer decodes them.
//
// Reading streams in constant memory and does not allocate per record:
//
//	r, err := pcap.Open("trace.pcapng.gz") // "-" reads standard input
//	if err != nil { ... }
//	defer r.Close()
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil { ... } // a *FileError naming the record and byte offset
//		p, err := rec.Network()
//		...
//	}
//
// A damaged file yields every record before the damage, then a *FileError
// whose Err is one of the ErrXxx sentinels (each of which also wraps the
// matching rocekit sentinel, so errors.Is(err, rocekit.ErrTruncated) works).
package pcap
