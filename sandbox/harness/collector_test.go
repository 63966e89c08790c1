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

var (
	agentStage = Expect{Rows: 2, Stage: StageAgent}
	scoreStage = Expect{Rows: 2, Stage: StageScore, Nonce: "n0nce"}
)

// TestFramesSplitAnywhere feeds the same stream cut at every byte boundary.
func TestFramesSplitAnywhere(t *testing.T) {
	stream := "hello \x1e not a frame\n" + frame(FrameStarted, "") + "mid" + frame(FrameResult, okResult) + "bye"
	for cut := 0; cut <= len(stream); cut++ {
		c := NewCollector(1<<20, nil, nil)
		w := c.Stdout()
		w.Write([]byte(stream[:cut]))
		w.Write([]byte(stream[cut:]))
		res, err := c.Finish(agentStage, Outcome{})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if res.Stdout != "hello \x1e not a frame\nmidbye" {
			t.Fatalf("cut %d: stdout = %q", cut, res.Stdout)
		}
		if res.Predictions[1] != "b" || res.Scores != nil || res.Usage.Tokens != 3 {
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
	_, err := c.Finish(Expect{Rows: 1}, Outcome{})
	var je *sandbox.JobError
	if !errors.As(err, &je) || je.Reason != sandbox.ReasonOutputLimit {
		t.Fatalf("err = %v, want output limit", err)
	}
}

func TestNotStartedIsUnavailable(t *testing.T) {
	c := NewCollector(100, nil, nil)
	c.Stderr().Write([]byte("bwrap: cannot do things\n"))
	_, err := c.Finish(Expect{Rows: 1}, Outcome{Exit: "exit status 1"})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "bwrap: cannot do things") {
		t.Fatalf("err = %v", err)
	}
}

func TestDecodeRejects(t *testing.T) {
	for name, tc := range map[string]struct {
		want    Expect
		payload string
	}{
		"not json":        {agentStage, `{"predictions":`},
		"few predictions": {agentStage, `{"predictions":["a"],"scores":[1,1]}`},
		"number pred":     {agentStage, `{"predictions":["a",3],"scores":[1,1]}`},
		"tokens frac":     {agentStage, `{"predictions":["a","b"],"usage":{"tokens":1.5}}`},
		"cost negative":   {agentStage, `{"predictions":["a","b"],"usage":{"cost":-1}}`},
		"reported error":  {agentStage, `{"errors":[{"reason":"exception","message":"run_batch raised X"}]}`},
		"huge prediction": {agentStage, `{"predictions":["a","` + strings.Repeat("x", MaxPredictionBytes+1) + `"]}`},
		"few scores":      {scoreStage, `{"nonce":"n0nce","scores":[1]}`},
		"string score":    {scoreStage, `{"nonce":"n0nce","scores":[1,"1"]}`},
		"bool score":      {scoreStage, `{"nonce":"n0nce","scores":[1,true]}`},
		"score 7":         {scoreStage, `{"nonce":"n0nce","scores":[1,7]}`},
		"negative score":  {scoreStage, `{"nonce":"n0nce","scores":[1,-0.5]}`},
		"no nonce":        {scoreStage, `{"scores":[1,1]}`},
		"wrong nonce":     {scoreStage, `{"nonce":"guess","scores":[1,1]}`},
	} {
		res, err := Decode([]byte(tc.payload), tc.want)
		if !errors.Is(err, sandbox.ErrJob) || res != nil {
			t.Errorf("%s: res = %v, err = %v; want a job error", name, res, err)
		}
	}
}

func TestDecodeClampsNoise(t *testing.T) {
	res, err := Decode([]byte(`{"nonce":"n0nce","scores":[1.0000000000000002,-1e-12]}`), scoreStage)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scores[0] != 1 || res.Scores[1] != 0 {
		t.Fatalf("scores = %v, want [1 0]", res.Scores)
	}
}

// TestAgentStageScoresIgnored: scores in the agent stage's frame are never read.
func TestAgentStageScoresIgnored(t *testing.T) {
	res, err := Decode([]byte(`{"predictions":["a","b"],"scores":[1,1]}`), agentStage)
	if err != nil {
		t.Fatal(err)
	}
	if res.Scores != nil {
		t.Fatalf("scores = %v, want none from the agent stage", res.Scores)
	}
}

// TestScoreStageDropsForeignFrames: a result frame without the run's nonce (one that eval.py
// printed from a crafted prediction, say) is dropped; the harness's own frame counts.
func TestScoreStageDropsForeignFrames(t *testing.T) {
	c := NewCollector(1<<20, nil, nil)
	w := c.Stdout()
	w.Write([]byte(frame(FrameStarted, "")))
	w.Write([]byte(frame(FrameResult, `{"scores":[1,1]}`)))
	w.Write([]byte(frame(FrameResult, `{"nonce":"guess","scores":[1,1]}`)))
	w.Write([]byte(frame(FrameResult, `{"nonce":"n0nce","scores":[0,0.25]}`)))
	res, err := c.Finish(scoreStage, Outcome{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scores[0] != 0 || res.Scores[1] != 0.25 {
		t.Fatalf("scores = %v, want [0 0.25]", res.Scores)
	}
	c = NewCollector(1<<20, nil, nil)
	c.Stdout().Write([]byte(frame(FrameStarted, "") + frame(FrameResult, `{"nonce":"guess","scores":[1,1]}`)))
	if _, err := c.Finish(scoreStage, Outcome{}); !errors.Is(err, sandbox.ErrJob) {
		t.Fatalf("err = %v, want a job error when only a forged frame came", err)
	}
}

func TestDecodeFeedback(t *testing.T) {
	want := Expect{Rows: 2, Stage: StageScore, Nonce: "n0nce"}
	res, err := Decode([]byte(`{"nonce":"n0nce","scores":[1,0],"feedback":[null,"too long"]}`), want)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Feedback) != 2 || res.Feedback[0] != "" || res.Feedback[1] != "too long" {
		t.Errorf("feedback = %q", res.Feedback)
	}
	long := strings.Repeat("x", MaxFeedbackBytes+10)
	res, err = Decode([]byte(`{"nonce":"n0nce","scores":[1,0],"feedback":["`+long+`",""]}`), want)
	if err != nil || len(res.Feedback[0]) != MaxFeedbackBytes {
		t.Errorf("long feedback: %v, %d bytes", err, len(res.Feedback[0]))
	}
	for name, payload := range map[string]string{
		"few":    `{"nonce":"n0nce","scores":[1,0],"feedback":["a"]}`,
		"number": `{"nonce":"n0nce","scores":[1,0],"feedback":["a",3]}`,
	} {
		if _, err := Decode([]byte(payload), want); err == nil {
			t.Errorf("%s: accepted %s", name, payload)
		}
	}
}

// TestResultFramesBounded: the result frames a run may write are bounded in number (and
// bytes): a flood of them, which the host would hold outside the sandbox's memory limit,
// aborts the run as malformed output.
func TestResultFramesBounded(t *testing.T) {
	aborted := 0
	c := NewCollector(1<<20, func() { aborted++ }, nil)
	w := c.Stdout()
	w.Write([]byte(frame(FrameStarted, "")))
	var err error
	for i := 0; i <= MaxResultFrames && err == nil; i++ {
		_, err = w.Write([]byte(frame(FrameResult, okResult)))
	}
	if err == nil || aborted != 1 {
		t.Fatalf("%d result frames accepted (abort called %d times)", MaxResultFrames+1, aborted)
	}
	_, err = c.Finish(scoreStage, Outcome{})
	var je *sandbox.JobError
	if !errors.As(err, &je) || je.Reason != sandbox.ReasonInvalidResult || !strings.Contains(je.Message, "result frames") {
		t.Fatalf("err = %v", err)
	}
}

// TestRequestFrameErrorAborts: an error from the backend's request handler (a guest that
// floods it) ends the run as malformed output.
func TestRequestFrameErrorAborts(t *testing.T) {
	aborted, n := 0, 0
	c := NewCollector(1<<20, func() { aborted++ }, func(byte, []byte) error {
		if n++; n > 2 {
			return errors.New("too many pending requests")
		}
		return nil
	})
	w := c.Stdout()
	w.Write([]byte(frame(FrameStarted, "")))
	for range 5 {
		w.Write([]byte(frame(FrameHTTP, "GET / HTTP/1.1\r\n\r\n")))
	}
	if n != 3 || aborted != 1 {
		t.Fatalf("handler called %d times, abort %d", n, aborted)
	}
	if _, err := c.Finish(agentStage, Outcome{}); err == nil || !strings.Contains(err.Error(), "too many pending requests") {
		t.Fatalf("err = %v", err)
	}
}
