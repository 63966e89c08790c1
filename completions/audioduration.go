package completions

import (
	"bytes"
	"encoding/binary"
)

// This file reads how long an uploaded audio file lasts from its container's headers,
// without decoding it, for the transcriptions an answer does not say the length of: as
// LiteLLM measures such a request (litellm_core_utils/audio_utils/utils.py
// calculate_request_duration, by soundfile's frame count), in pure Go.

// Ceilings on an audio file's bitrate, in bytes a second, that a length read from a header
// is held to: a header is written by the caller and could say anything, so the length is
// never taken as less than the file's size at its format's highest usual rate. For
// containers that may hold lossless audio (WAV, FLAC, MP4's ALAC) that is 24-bit stereo at
// 192 kHz; for Ogg's Vorbis and Opus, well over their 510 kbit/s or so.
const (
	losslessCeilingBytesPerSecond = 192000 * 2 * 3
	oggCeilingBytesPerSecond      = 640000 / 8
)

// headerFloorBytesPerSecond is the other side: a length read from a header is never taken
// as more than the file's size at 256 bit/s, below any speech codec's rate (Codec2's
// lowest is 450 bit/s, Opus's 6 kbit/s), so a few bytes claiming years (a FLAC sample
// count at 1 Hz, an MP4 duration of 2^63) are not billed years, nor overflow the audio
// tokens counted from the length into a negative count (a credit).
const headerFloorBytesPerSecond = 32

// audioFileSeconds is the length of file's audio as its container says it: a WAV
// header's data size, FLAC's STREAMINFO sample count, an Ogg Vorbis or Opus stream's last
// granule position, an MP4/M4A movie header's duration, or the frames of an MPEG audio
// (MP3) stream counted one by one. 0 when file is none of these or does not say (WebM,
// AAC in ADTS, a FLAC of unknown sample count, an MP3 whose frames do not follow on).
// A header's length is held between the file's size at its format's highest usual rate
// and at headerFloorBytesPerSecond.
func audioFileSeconds(file []byte) float64 {
	var s, ceiling float64
	switch {
	case len(file) >= 12 && string(file[:4]) == "RIFF" && string(file[8:12]) == "WAVE":
		s, ceiling = wavSeconds(file), losslessCeilingBytesPerSecond
	case bytes.HasPrefix(file, []byte("OggS")):
		s, ceiling = oggSeconds(file), oggCeilingBytesPerSecond
	case len(file) >= 8 && string(file[4:8]) == "ftyp":
		s, ceiling = mp4Seconds(file), losslessCeilingBytesPerSecond
	default:
		rest := file[id3v2Size(file):]
		if bytes.HasPrefix(rest, []byte("fLaC")) {
			s, ceiling = flacSeconds(rest), losslessCeilingBytesPerSecond
		} else {
			return mpegAudioSeconds(rest) // frames counted, not claimed: no ceiling needed
		}
	}
	if s <= 0 {
		return 0
	}
	return min(max(s, float64(len(file))/ceiling), float64(len(file))/headerFloorBytesPerSecond)
}

// id3v2Size is the length of the ID3v2 tag file starts with (MP3s and some FLACs carry
// one), 0 when it has none or it runs past file's end.
func id3v2Size(file []byte) int {
	if len(file) < 10 || string(file[:3]) != "ID3" {
		return 0
	}
	n := 10
	for _, b := range file[6:10] {
		if b&0x80 != 0 {
			return 0 // not a synchsafe size: no tag
		}
	}
	n += int(file[6])<<21 | int(file[7])<<14 | int(file[8])<<7 | int(file[9])
	if file[5]&0x10 != 0 {
		n += 10 // a footer
	}
	if n > len(file) {
		return 0
	}
	return n
}

// flacSeconds is a FLAC stream's length from its STREAMINFO block (file starts at
// "fLaC"): the total samples over the sample rate; 0 when the block says no count.
func flacSeconds(file []byte) float64 {
	// "fLaC", then the first metadata block, STREAMINFO: a 4-byte block header and 34
	// bytes, the sample rate's 20 bits from byte 10 and the total samples' 36 bits after
	// the channels and bits per sample.
	const at = 8
	if len(file) < at+18 || file[4]&0x7F != 0 {
		return 0
	}
	b := file[at:]
	rate := uint32(b[10])<<12 | uint32(b[11])<<4 | uint32(b[12])>>4
	total := uint64(b[13]&0x0F)<<32 | uint64(binary.BigEndian.Uint32(b[14:18]))
	if rate == 0 || total == 0 {
		return 0
	}
	return float64(total) / float64(rate)
}

// oggSeconds is an Ogg Vorbis or Opus stream's length: its last page's granule position
// (the samples decoded to its end) over the sample rate its first packet says (Opus's
// granules count at 48 kHz, after its pre-skip); 0 for another codec or when no later
// page of the first stream has a granule position.
func oggSeconds(file []byte) float64 {
	if len(file) < 27 || file[4] != 0 {
		return 0
	}
	serial := binary.LittleEndian.Uint32(file[14:18])
	segments := int(file[26])
	first := 27 + segments
	if len(file) < first {
		return 0
	}
	packet := file[first:]
	var rate, skip float64
	switch {
	case len(packet) >= 16 && string(packet[:7]) == "\x01vorbis":
		rate = float64(binary.LittleEndian.Uint32(packet[12:16]))
	case len(packet) >= 12 && string(packet[:8]) == "OpusHead":
		rate, skip = 48000, float64(binary.LittleEndian.Uint16(packet[10:12]))
	default:
		return 0
	}
	if rate == 0 {
		return 0
	}
	// The last page of the stream: the last "OggS" capture pattern with its serial.
	for end := len(file); end > first; {
		i := bytes.LastIndex(file[first:end], []byte("OggS"))
		if i < 0 {
			break
		}
		i += first
		end = i
		if len(file) < i+27 || file[i+4] != 0 || binary.LittleEndian.Uint32(file[i+14:i+18]) != serial {
			continue
		}
		granule := int64(binary.LittleEndian.Uint64(file[i+6 : i+14]))
		if granule <= 0 {
			continue // -1: no packet ends on this page
		}
		return max(float64(granule)-skip, 0) / rate
	}
	return 0
}

// mp4Seconds is an MP4/M4A file's length from its movie header (moov's mvhd): its
// duration over its time scale; 0 when it has none.
func mp4Seconds(file []byte) float64 {
	moov, ok := mp4Box(file, "moov")
	if !ok {
		return 0
	}
	mvhd, ok := mp4Box(moov, "mvhd")
	if !ok || len(mvhd) < 4 {
		return 0
	}
	var scale uint32
	var duration uint64
	switch mvhd[0] { // the version
	case 0:
		if len(mvhd) < 20 {
			return 0
		}
		scale, duration = binary.BigEndian.Uint32(mvhd[12:16]), uint64(binary.BigEndian.Uint32(mvhd[16:20]))
	case 1:
		if len(mvhd) < 32 {
			return 0
		}
		scale, duration = binary.BigEndian.Uint32(mvhd[20:24]), binary.BigEndian.Uint64(mvhd[24:32])
	default:
		return 0
	}
	if scale == 0 || duration == 0 || duration == 1<<32-1 || duration == 1<<64-1 {
		return 0 // all ones: unknown
	}
	return float64(duration) / float64(scale)
}

// mp4Box is the body of the first box of type typ among the boxes b holds, and whether
// there is one.
func mp4Box(b []byte, typ string) ([]byte, bool) {
	for len(b) >= 8 {
		size, head := uint64(binary.BigEndian.Uint32(b[:4])), uint64(8)
		switch size {
		case 0:
			size = uint64(len(b)) // to the end
		case 1:
			if len(b) < 16 {
				return nil, false
			}
			size, head = binary.BigEndian.Uint64(b[8:16]), 16
		}
		if size < head || size > uint64(len(b)) {
			return nil, false
		}
		if string(b[4:8]) == typ {
			return b[head:size], true
		}
		b = b[size:]
	}
	return nil, false
}

// mpegAudioSeconds is the length of an MPEG-1/2/2.5 audio stream (MP3, MP2) counted frame
// by frame: each frame header says its samples, sample rate and length, so a variable
// bitrate is measured as it plays. A Xing/Info/VBRI frame (a VBR header, no audio) is not
// counted, nor an ID3v1/APE tag at the end. 0 unless the frames follow on from the start
// and cover nine tenths of the bytes (else it is not taken for MPEG audio: too little of
// it can be told apart from chance).
func mpegAudioSeconds(b []byte) float64 {
	var seconds float64
	covered, frames := 0, 0
	for off := 0; off+4 <= len(b); {
		f, ok := mpegFrameAt(b[off:])
		if !ok || off+f.length > len(b) {
			break
		}
		if frames > 0 || !isVBRHeaderFrame(b[off:off+f.length]) {
			seconds += float64(f.samples) / float64(f.rate)
		}
		frames++
		covered += f.length
		off += f.length
	}
	trailing := 0
	if len(b) >= 128 && string(b[len(b)-128:len(b)-125]) == "TAG" {
		trailing = 128
	}
	if i := bytes.LastIndex(b, []byte("APETAGEX")); i >= 0 && i >= covered {
		trailing = len(b) - i
	}
	if frames < 2 || covered*10 < (len(b)-trailing)*9 {
		return 0
	}
	return seconds
}

// mpegFrame is what an MPEG audio frame header says: its samples, sample rate and length
// in bytes.
type mpegFrame struct {
	samples, rate, length int
}

// MPEG audio's bitrates (kbit/s) by index 1–14: MPEG-1 layers I, II, III, then MPEG-2
// and 2.5 layer I, and layers II and III.
var mpegBitrates = [5][14]int{
	{32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
	{32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
	{32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
	{32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
	{8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
}

// mpegFrameAt reads the MPEG audio frame header b starts with; ok is false when b does
// not start with a valid one (a free-format bitrate, which says no length, included).
func mpegFrameAt(b []byte) (mpegFrame, bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1]&0xE0 != 0xE0 {
		return mpegFrame{}, false
	}
	version, layer := (b[1]>>3)&3, (b[1]>>1)&3 // version 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5; layer 3: I, 2: II, 1: III
	bi, ri, padding := int(b[2]>>4), int(b[2]>>2)&3, int(b[2]>>1)&1
	if version == 1 || layer == 0 || bi == 0 || bi == 15 || ri == 3 {
		return mpegFrame{}, false
	}
	rate := [3]int{44100, 48000, 32000}[ri]
	table := 0
	switch {
	case version == 3:
		table = int(3 - layer) // I, II, III
	case layer == 3:
		table = 3
	default:
		table = 4
	}
	if version == 2 {
		rate /= 2
	} else if version == 0 {
		rate /= 4
	}
	bitrate := mpegBitrates[table][bi-1] * 1000
	var samples, length int
	switch {
	case layer == 3: // I: slots of 4 bytes
		samples = 384
		length = (12*bitrate/rate + padding) * 4
	case layer == 1 && version != 3: // III of MPEG-2 and 2.5
		samples = 576
		length = 72*bitrate/rate + padding
	default:
		samples = 1152
		length = 144*bitrate/rate + padding
	}
	if length < 4 {
		return mpegFrame{}, false
	}
	return mpegFrame{samples: samples, rate: rate, length: length}, true
}

// isVBRHeaderFrame reports whether frame is an encoder's VBR header (Xing, Info, VBRI),
// which decoders skip: its tag sits after the side information, within its first bytes.
func isVBRHeaderFrame(frame []byte) bool {
	head := frame[:min(len(frame), 64)]
	return bytes.Contains(head, []byte("Xing")) || bytes.Contains(head, []byte("Info")) || bytes.Contains(head, []byte("VBRI"))
}
