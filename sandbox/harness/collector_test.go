package harness

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchyard-ai/switchyard/sandbox"
)

func frame(kind byte, payload string) string {
	return Magic + string(kind) + itoa(len(payload)) + "\n" + payload
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

const okResult = `{"predictions":["a","b"],"scores":[1,0.5],"usage":{"tokens":3,"cost":0.1},"errors":[]}`

// TestFramesSplitAnywhere feeds the same stream cut at every byte boundary.
func TestFramesSplitAnywhere(t *testing.T) {
	stream := "hello \x1e not a frame\n" + frame(FrameStarted, "") + "mid" + frame(FrameResult, okResult) + "bye"
	for cut := 0; cut <= len(stream); cut++ {
		c := NewCollector(1<<20, nil, nil)
		w := c.Stdout()
		w.Write([]byte(stream[:cut]))
		w.Write([]byte(stream[cut:]))
		res, err := c.Finish(2, Outcome{})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if res.Stdout != "hello \x1e not a frame\nmidbye" {
			t.Fatalf("cut %d: stdout = %q", cut, res.Stdout)
		}
		if res.Predictions[1] != "b" || res.Scores[1] != 0.5 || res.Usage.Tokens != 3 {
			t.Fatalf("cut %d: result = %+v", cut, res)
		}
	}
}

func TestOutputLimitAborts(t *testing.T) {
	aborted := 0
	c := NewCollector(10, func() { aborted++ }, nil)
	c.Stdout().Write([]byte(frame(FrameStarted, "")))
	c.Stderr().Write([]byte("12345"))
	if _, err := c.Stdout().Write([]byte("6789012")); err == nil {
		t.Fatal("write past the cap succeeded")
	}
	c.Stdout().Write([]byte("more"))
	if aborted != 1 {
		t.Fatalf("abort called %d times, want 1", aborted)
	}
	_, err := c.Finish(1, Outcome{})
	var je *sandbox.JobError
	if !errors.As(err, &je) || je.Reason != sandbox.ReasonOutputLimit {
		t.Fatalf("err = %v, want output limit", err)
	}
}

func TestNotStartedIsUnavailable(t *testing.T) {
	c := NewCollector(100, nil, nil)
	c.Stderr().Write([]byte("bwrap: cannot do things\n"))
	_, err := c.Finish(1, Outcome{Exit: "exit status 1"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "bwrap: cannot do things") {
		t.Fatalf("err = %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, payload := range map[string]string{
		"not json":        `{"predictions":`,
		"few predictions": `{"predictions":["a"],"scores":[1,1]}`,
		"few scores":      `{"predictions":["a","b"],"scores":[1]}`,
		"number pred":     `{"predictions":["a",3],"scores":[1,1]}`,
		"string score":    `{"predictions":["a","b"],"scores":[1,"1"]}`,
		"bool score":      `{"predictions":["a","b"],"scores":[1,true]}`,
		"score 7":         `{"predictions":["a","b"],"scores":[1,7]}`,
		"negative score":  `{"predictions":["a","b"],"scores":[1,-0.5]}`,
		"tokens frac":     `{"predictions":["a","b"],"scores":[1,1],"usage":{"tokens":1.5}}`,
		"cost negative":   `{"predictions":["a","b"],"scores":[1,1],"usage":{"cost":-1}}`,
		"reported error":  `{"errors":[{"reason":"exception","message":"run_batch raised X"}]}`,
		"huge prediction": `{"predictions":["a","` + strings.Repeat("x", MaxPredictionBytes+1) + `"],"scores":[1,1]}`,
	} {
		res, err := Decode([]byte(payload), 2)
		if !errors.Is(err, sandbox.ErrJob) || res != nil {
			t.Errorf("%s: res = %v, err = %v; want a job error", name, res, err)
		}
	}
}

func TestDecodeClampsNoise(t *testing.T) {
	res, err := Decode([]byte(`{"predictions":["a","b"],"scores":[1.0000000000000002,-1e-12]}`), 2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scores[0] != 1 || res.Scores[1] != 0 {
		t.Fatalf("scores = %v, want [1 0]", res.Scores)
	}
}
