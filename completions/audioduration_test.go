package completions

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// mp3Frames is an MPEG audio stream of n frames with header h (its length per
// mpegFrameAt), each frame's payload zeros.
func mp3Frames(h [4]byte, n int) []byte {
	f, ok := mpegFrameAt(h[:])
	if !ok {
		panic("bad frame header")
	}
	frame := make([]byte, f.length)
	copy(frame, h[:])
	return bytes.Repeat(frame, n)
}

// id3v2 is an ID3v2.3 tag of size bytes in all.
func id3v2(size int) []byte {
	b := make([]byte, size)
	copy(b, "ID3\x03\x00\x00")
	n := size - 10
	b[6], b[7], b[8], b[9] = byte(n>>21&0x7F), byte(n>>14&0x7F), byte(n>>7&0x7F), byte(n&0x7F)
	return b
}

// flacFile is a FLAC stream at rate claiming samples, with body bytes of frames.
func flacFile(rate int, samples uint64, body int) []byte {
	b := make([]byte, 8+34+body)
	copy(b, "fLaC")
	b[4] = 0x80 // the last metadata block, STREAMINFO
	b[7] = 34
	si := b[8:]
	si[10], si[11], si[12] = byte(rate>>12), byte(rate>>4), byte(rate<<4)
	si[13] = byte(samples>>32) & 0x0F
	binary.BigEndian.PutUint32(si[14:18], uint32(samples))
	return b
}

// oggPage is an Ogg page of stream serial at granule holding packet.
func oggPage(serial uint32, granule int64, packet []byte) []byte {
	b := make([]byte, 27, 28+len(packet))
	copy(b, "OggS")
	binary.LittleEndian.PutUint64(b[6:], uint64(granule))
	binary.LittleEndian.PutUint32(b[14:], serial)
	b[26] = 1
	b = append(b, byte(len(packet)))
	return append(b, packet...)
}

// mp4File is an MP4 file whose movie header (version 0 or 1) says duration at scale,
// with mdat bytes of media after it.
func mp4File(version byte, scale uint32, duration uint64, mdat int) []byte {
	box := func(typ string, body []byte) []byte {
		b := make([]byte, 8, 8+len(body))
		binary.BigEndian.PutUint32(b, uint32(8+len(body)))
		copy(b[4:], typ)
		return append(b, body...)
	}
	var mvhd []byte
	if version == 0 {
		mvhd = make([]byte, 100)
		binary.BigEndian.PutUint32(mvhd[12:], scale)
		binary.BigEndian.PutUint32(mvhd[16:], uint32(duration))
	} else {
		mvhd = make([]byte, 112)
		mvhd[0] = 1
		binary.BigEndian.PutUint32(mvhd[20:], scale)
		binary.BigEndian.PutUint64(mvhd[24:], duration)
	}
	out := box("ftyp", []byte("M4A \x00\x00\x00\x00M4A isom"))
	out = append(out, box("mdat", make([]byte, mdat))...)
	return append(out, box("moov", append(box("mvhd", mvhd), box("trak", make([]byte, 16))...))...)
}

// TestAudioFileSeconds: an upload's length is read from its container's headers — WAV,
// FLAC's sample count, Ogg Vorbis and Opus last granule, an MP4/M4A movie header (versions
// 0 and 1), MP3's frames counted one by one (constant and variable bitrates, MPEG-2, an
// ID3v2 tag, a Xing frame and an ID3v1 tag not counted) — so a 64 kbit/s MP3 is billed
// its length, not half of it as its size at 128 kbit/s says; a header claiming less than
// the file's size at its format's highest usual rate is held to that; a file that says
// nothing (WebM, an MP3 whose frames break off, a bare ID3 tag) is 0.
func TestAudioFileSeconds(t *testing.T) {
	cbr128 := [4]byte{0xFF, 0xFB, 0x90, 0x00} // MPEG-1 layer III, 128 kbit/s, 44.1 kHz: 417 bytes
	cbr64 := [4]byte{0xFF, 0xFB, 0x50, 0x00}  // 64 kbit/s: 208 bytes
	mpeg2 := [4]byte{0xFF, 0xF3, 0x44, 0x00}  // MPEG-2 layer III, 32 kbit/s, 24 kHz: 96 bytes, 576 samples
	xing := mp3Frames(cbr128, 1)
	copy(xing[36:], "Xing")
	id3v1 := append([]byte("TAG"), make([]byte, 125)...)
	vbr := append(mp3Frames(cbr128, 50), mp3Frames(cbr64, 150)...)
	opusHead := []byte("OpusHead\x01\x01\x38\x01\x80\x3e\x00\x00\x00\x00\x00") // pre-skip 312
	vorbisID := append([]byte("\x01vorbis\x00\x00\x00\x00\x01"), binary.LittleEndian.AppendUint32(nil, 44100)...)
	vorbisID = append(vorbisID, make([]byte, 14)...)
	shortOpus := bytes.Join([][]byte{oggPage(1, 0, opusHead), oggPage(1, 480+312, make([]byte, 255)), make([]byte, oggCeilingBytesPerSecond*4)}, nil)
	broken := mp3Frames(cbr128, 100)
	copy(broken[417*30:], "not a frame")
	for _, c := range []struct {
		what string
		file []byte
		want float64
	}{
		{"WAV", wavFile(8000, 12), 12},
		{"MP3 at 128 kbit/s with tags and a Xing frame", bytes.Join([][]byte{id3v2(300), xing, mp3Frames(cbr128, 100), id3v1}, nil), 100 * 1152.0 / 44100},
		{"MP3 at 64 kbit/s", mp3Frames(cbr64, 400), 400 * 1152.0 / 44100},
		{"MP3 of variable bitrate", vbr, 200 * 1152.0 / 44100},
		{"MPEG-2 layer III", mp3Frames(mpeg2, 250), 250 * 576.0 / 24000},
		{"FLAC", flacFile(16000, 160000, 50000), 10},
		{"FLAC behind an ID3 tag", append(id3v2(64), flacFile(44100, 44100*3, 1000)...), 3},
		{"Ogg Opus", bytes.Join([][]byte{oggPage(7, 0, opusHead), oggPage(7, 48000*2, make([]byte, 200)), oggPage(7, 48000*5+312, make([]byte, 200))}, nil), 5},
		{"Ogg Vorbis", bytes.Join([][]byte{oggPage(3, 0, vorbisID), oggPage(3, 44100*3, make([]byte, 100)), oggPage(3, -1, make([]byte, 10))}, nil), 3},
		{"M4A, movie header version 0", mp4File(0, 1000, 7500, 4000), 7.5},
		{"M4A, movie header version 1", mp4File(1, 44100, 44100*9, 4000), 9},
		{"FLAC claiming one sample", flacFile(16000, 1, losslessCeilingBytesPerSecond-42), 1},
		{"Ogg Opus claiming 10 ms", shortOpus, float64(len(shortOpus)) / oggCeilingBytesPerSecond},
		{"WebM", append([]byte("\x1a\x45\xdf\xa3webm"), make([]byte, 5000)...), 0},
		{"MP3 whose frames break off", broken, 0},
		{"a bare ID3 tag", id3v2(400), 0},
		{"nothing", nil, 0},
	} {
		if got := audioFileSeconds(c.file); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v seconds, want %v", c.what, got, c.want)
		}
	}
}

// TestEstimatedAudioReadsTheLength: a transcription whose answer went unread (over the
// size cap) is charged the audio's length as its headers say it — a 64 kbit/s MP3 its
// whole length, where its size at 128 kbit/s said half — and only a file that says
// nothing is taken at 128 kbit/s.
func TestEstimatedAudioReadsTheLength(t *testing.T) {
	mp3 := mp3Frames([4]byte{0xFF, 0xFB, 0x50, 0x00}, 3000) // 64 kbit/s, 78.4 s
	if u := estimatedAudio(mp3); math.Abs(u.Seconds-3000*1152.0/44100) > 1e-9 || u.InputAudioTokens != int(math.Ceil(u.Seconds*10)) {
		t.Errorf("a 64 kbit/s MP3: %+v, want its %v seconds (its size says %v)", u, 3000*1152.0/44100, float64(len(mp3))/estimatedAudioBytesPerSecond)
	}
	if u := estimatedAudio(make([]byte, 48000)); u.Seconds != 3 {
		t.Errorf("a file that says nothing: %+v, want 3 seconds (48,000 bytes at 128 kbit/s)", u)
	}
}

// TestForgedAudioHeaderIsBounded: a small upload whose header claims years (a FLAC sample
// count at 1 Hz, an Ogg Vorbis stream at 1 Hz, an MP4 duration of 2^63, a WAV of one byte
// a second) is taken to last at most its size at headerFloorBytesPerSecond, and its audio
// tokens stay positive (2^63 seconds overflowed them into a negative count: a credit for
// a model priced by its tokens).
func TestForgedAudioHeaderIsBounded(t *testing.T) {
	vorbisAt1Hz := append([]byte("\x01vorbis\x00\x00\x00\x00\x01"), binary.LittleEndian.AppendUint32(nil, 1)...)
	vorbisAt1Hz = append(vorbisAt1Hz, make([]byte, 14)...)
	wav := wavFile(8000, 1)
	binary.LittleEndian.PutUint32(wav[28:32], 1) // the fmt chunk's bytes per second
	for _, c := range []struct {
		what string
		file []byte
	}{
		{"FLAC at 1 Hz", flacFile(1, 1<<36-1, 1000)},
		{"Ogg Vorbis at 1 Hz", bytes.Join([][]byte{oggPage(3, 0, vorbisAt1Hz), oggPage(3, 1<<62, make([]byte, 100))}, nil)},
		{"M4A of 2^63 ticks at 1 Hz", mp4File(1, 1, 1<<63, 1000)},
		{"WAV of one byte a second", wav},
	} {
		most := float64(len(c.file)) / headerFloorBytesPerSecond
		if got := audioFileSeconds(c.file); got <= 0 || got > most {
			t.Errorf("%s (%d bytes): %v seconds, want at most %v", c.what, len(c.file), got, most)
		}
		if u := estimatedAudio(c.file); u.InputTokens <= 0 || u.InputAudioTokens <= 0 || u.Seconds > most {
			t.Errorf("%s: estimated %+v, want at most %v seconds and positive tokens", c.what, u, most)
		}
	}
}

// FuzzAudioFileSeconds: no upload makes the header readers panic or answer a length that
// is negative, not a number or more than its size at headerFloorBytesPerSecond, nor
// negative audio tokens.
func FuzzAudioFileSeconds(f *testing.F) {
	f.Add(wavFile(8000, 1))
	f.Add(mp3Frames([4]byte{0xFF, 0xFB, 0x90, 0x00}, 3))
	f.Add(flacFile(16000, 16000, 10))
	f.Add(mp4File(1, 1000, 1000, 10))
	f.Add(oggPage(1, 48000, []byte("OpusHead\x01\x01\x38\x01\x80\x3e\x00\x00\x00\x00\x00")))
	f.Fuzz(func(t *testing.T, file []byte) {
		if s := audioFileSeconds(file); s < 0 || math.IsNaN(s) || s > float64(len(file))/headerFloorBytesPerSecond {
			t.Fatalf("%v seconds of %d bytes", s, len(file))
		}
		if u := estimatedAudio(file); u.Seconds < 0 || math.IsNaN(u.Seconds) || u.InputTokens < 0 {
			t.Fatalf("%+v", u)
		}
	})
}
