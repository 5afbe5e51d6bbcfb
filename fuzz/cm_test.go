package fuzz

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/cm"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// FuzzCM feeds arbitrary bytes to the CM MAD decoder. For any input b:
//
//   - cm.New never panics; it fails exactly when b is shorter than the
//     24-byte MAD header, with a rocekit.ErrTruncated error naming a field;
//   - otherwise the view aliases b (no copy) and every message accessor
//     either fails with a *rocekit.HeaderError (wrong attribute: ErrInvalid;
//     short: ErrTruncated with a field name) or returns a view whose every
//     getter and PrivateData can be called without panicking.
//
// Seeds: every CM MAD in ../shared/captures (when present), one zeroed MAD
// per attribute, and their truncations.
func FuzzCM(f *testing.F) {
	for _, m := range cmSeedMADs() {
		f.Add(m)
		f.Add(m[:cm.HeaderLen+20])
		f.Add(m[:cm.HeaderLen-1])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := cm.New(b)
		if len(b) < cm.HeaderLen {
			cmExpectErr(t, err, rocekit.ErrTruncated)
			return
		}
		if err != nil {
			t.Fatalf("New(%d bytes): %v", len(b), err)
		}
		if &m[0] != &b[0] {
			t.Fatal("New copied the bytes")
		}
		_ = m.String()
		_ = m.Validate()
		_, _ = m.LocalCommID(), m.RemoteCommID()
		_, _, _, _ = m.Status(), m.ClassSpecific(), m.AttributeModifier(), m.Response()

		if r, err := m.REQ(); cmCheck(t, m, cm.AttrREQ, err) {
			_, _, _, _, _ = r.LocalCommID(), r.ServiceID(), r.LocalCAGUID(), r.LocalQKey(), r.LocalQPN()
			_, _, _, _ = r.ResponderResources(), r.LocalEECN(), r.InitiatorDepth(), r.RemoteEECN()
			_, _, _, _ = r.RemoteCMResponseTimeout(), r.TransportType().String(), r.EndToEndFlowControl(), r.StartingPSN()
			_, _, _, _ = r.LocalCMResponseTimeout(), r.RetryCount(), r.PKey(), cm.MTUBytes(r.PathMTU())
			_, _, _, _, _ = r.RDCExists(), r.RNRRetryCount(), r.MaxCMRetries(), r.SRQ(), r.ExtendedTransportType()
			_, _, _, _ = r.PrimaryLocalLID(), r.PrimaryRemoteLID(), r.PrimaryLocalGID(), r.PrimaryRemoteGID()
			_, _, _, _, _ = r.PrimaryFlowLabel(), r.PrimaryPacketRate(), r.PrimaryTrafficClass(), r.PrimaryHopLimit(), r.PrimarySL()
			_, _, _, _ = r.PrimarySubnetLocal(), r.PrimaryLocalACKTimeout(), r.AlternateLocalLID(), r.AlternateRemoteLID()
			_, _, _ = r.AlternateLocalGID(), r.AlternateRemoteGID(), r.AlternateLocalACKTimeout()
			if len(r.PrivateData()) > cm.REQPrivateLen {
				t.Fatal("REQ private data too long")
			}
		}
		if r, err := m.REP(); cmCheck(t, m, cm.AttrREP, err) {
			_, _, _, _, _ = r.LocalCommID(), r.RemoteCommID(), r.LocalQKey(), r.LocalQPN(), r.LocalEECN()
			_, _, _, _, _ = r.StartingPSN(), r.ResponderResources(), r.InitiatorDepth(), r.TargetACKDelay(), r.FailoverAccepted()
			_, _, _, _, _ = r.EndToEndFlowControl(), r.RNRRetryCount(), r.SRQ(), r.LocalCAGUID(), r.PrivateData()
		}
		if r, err := m.REJ(); cmCheck(t, m, cm.AttrREJ, err) {
			_, _, _, _ = r.LocalCommID(), r.RemoteCommID(), r.MessageRejected(), r.RejectInfoLength()
			_, _, _ = r.Reason().String(), r.ARI(), r.PrivateData()
		}
		if r, err := m.MRA(); cmCheck(t, m, cm.AttrMRA, err) {
			_, _, _, _, _ = r.LocalCommID(), r.RemoteCommID(), r.MessageMRAed(), r.ServiceTimeout(), r.PrivateData()
		}
		if r, err := m.RTU(); cmCheck(t, m, cm.AttrRTU, err) {
			_, _, _ = r.LocalCommID(), r.RemoteCommID(), r.PrivateData()
		}
		if r, err := m.DREQ(); cmCheck(t, m, cm.AttrDREQ, err) {
			_, _, _, _ = r.LocalCommID(), r.RemoteCommID(), r.RemoteQPN(), r.PrivateData()
		}
		if r, err := m.DREP(); cmCheck(t, m, cm.AttrDREP, err) {
			_, _, _ = r.LocalCommID(), r.RemoteCommID(), r.PrivateData()
		}
	})
}

// cmCheck reports whether a message accessor succeeded; a failure must be a
// HeaderError: ErrInvalid for another attribute, ErrTruncated naming a field
// for the right one.
func cmCheck(t *testing.T, m cm.MAD, a cm.AttrID, err error) bool {
	t.Helper()
	if err == nil {
		if m.AttributeID() != a {
			t.Fatalf("%s accessor accepted attribute %s", a, m.AttributeID())
		}
		return true
	}
	if m.AttributeID() != a {
		cmExpectErr(t, err, rocekit.ErrInvalid)
	} else {
		cmExpectErr(t, err, rocekit.ErrTruncated)
	}
	return false
}

func cmExpectErr(t *testing.T, err, want error) {
	t.Helper()
	var he *rocekit.HeaderError
	if !errors.As(err, &he) || !errors.Is(err, want) {
		t.Fatalf("error %v, want a HeaderError wrapping %v", err, want)
	}
	if he.Field == "" {
		t.Fatalf("error %v names no field", err)
	}
}

// cmSeedMADs returns one zeroed MAD per decoded attribute plus every CM MAD
// of the shared captures.
func cmSeedMADs() [][]byte {
	var out [][]byte
	for _, a := range []cm.AttrID{cm.AttrREQ, cm.AttrMRA, cm.AttrREJ, cm.AttrREP, cm.AttrRTU, cm.AttrDREQ, cm.AttrDREP} {
		m := cm.MAD(make([]byte, cm.MADLen))
		m.SetBaseVersion(cm.BaseVer)
		m.SetMgmtClass(cm.MgmtClass)
		m.SetClassVersion(cm.ClassVer)
		m.SetMethod(cm.MethodSend)
		m.SetAttributeID(a)
		out = append(out, m)
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "captures", "*.pcap"))
	for _, name := range files {
		r, err := pcap.Open(name)
		if err != nil {
			continue
		}
		var f packet.Frame
		for {
			rec, err := r.Next()
			if err == io.EOF || err != nil {
				break
			}
			if err := f.DecodeRecord(rec); err != nil {
				continue
			}
			if m, err := cm.FromPacket(&f.Transport); err == nil {
				out = append(out, append([]byte(nil), m...))
			}
		}
		r.Close()
	}
	return out
}
