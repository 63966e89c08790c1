package routing

import (
	"math"
	"regexp"
	"strings"
)

// DefaultLastTurnWeight is how much the last user turn counts against the rest of the
// conversation when features or router probabilities are mixed (see [Conversation]).
const DefaultLastTurnWeight = 0.7

// Conversation is the routing view of a request's messages: its fixed text rendering and
// the features the default scorer reads.
//
// Rendering (fixed): each message becomes "<role>: <content>" with the content's
// surrounding white space trimmed; messages are joined with "\n" in order. [Conversation.Text]
// is that rendering; [Conversation.LastUser] is the content of the last user message (or of
// the last message if there is no user message). The last user turn weighs most: feature
// values and custom router probabilities are w·f(LastUser) + (1−w)·f(Text) with
// w = DefaultLastTurnWeight (0.7) unless set otherwise; a conversation of one message uses
// f(LastUser) alone.
type Conversation struct {
	// Text is the whole conversation rendered as described above.
	Text string
	// LastUser is the content of the last user turn.
	LastUser string
	// Single is true when the conversation has one message, so Text adds nothing to LastUser.
	Single bool
	// Features are the conversation features the default scorer reads.
	Features Features
}

// Features describe a conversation for the default scorer. Code and Math are signals in
// [0,1] mixed as described on [Conversation].
type Features struct {
	// Chars is the number of characters (runes) of all message contents.
	Chars int
	// UserTurns is the number of user messages.
	UserTurns int
	// Code is the code signal: 1 for a fenced code block, otherwise 0.34 per distinct code
	// cue (keywords such as "def ", "func ", "#include", "SELECT ... FROM", words such as
	// "python", "function", "compile", "stack trace"), capped at 1.
	Code float64
	// Math is the math signal: 1 for LaTeX math, otherwise 0.34 per distinct math cue
	// (arithmetic expressions, "solve", "equation", "integral", "probability", ...), capped at 1.
	Math float64
	// Tools is the number of tools in the request.
	Tools int
}

// Difficulty maps the features to [0,1]:
//
//	d = 0.10 + 0.25·L + 0.25·Code + 0.25·Math + 0.10·[Tools>0] + 0.05·T
//
// where L = min(1, log10(1+Chars)/4) (10,000 characters give 1) and
// T = min(1, (UserTurns−1)/5).
func (f Features) Difficulty() float64 {
	l := math.Min(1, math.Log10(1+float64(f.Chars))/4)
	t := math.Min(1, math.Max(0, float64(f.UserTurns-1))/5)
	tools := 0.0
	if f.Tools > 0 {
		tools = 1
	}
	d := 0.10 + 0.25*l + 0.25*f.Code + 0.25*f.Math + 0.10*tools + 0.05*t
	return math.Max(0, math.Min(1, d))
}

// NewConversation renders msgs and computes their features with the given last-turn weight
// (0 or out of (0,1] means DefaultLastTurnWeight). tools is the number of tools offered.
func NewConversation(msgs []Message, tools int, lastTurnWeight float64) *Conversation {
	if lastTurnWeight <= 0 || lastTurnWeight > 1 {
		lastTurnWeight = DefaultLastTurnWeight
	}
	var b strings.Builder
	c := &Conversation{Single: len(msgs) == 1}
	last := -1
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte('\n')
		}
		content := strings.TrimSpace(m.Content)
		b.WriteString(m.Role)
		b.WriteString(": ")
		b.WriteString(content)
		c.Features.Chars += len([]rune(content))
		if m.Role == "user" {
			c.Features.UserTurns++
			last = i
		}
	}
	if last < 0 && len(msgs) > 0 {
		last = len(msgs) - 1
	}
	c.Text = b.String()
	if last >= 0 {
		c.LastUser = strings.TrimSpace(msgs[last].Content)
	}
	c.Features.Tools = tools
	mix := func(sig func(string) float64) float64 {
		if c.Single {
			return sig(c.LastUser)
		}
		return lastTurnWeight*sig(c.LastUser) + (1-lastTurnWeight)*sig(c.Text)
	}
	c.Features.Code = mix(codeSignal)
	c.Features.Math = mix(mathSignal)
	return c
}

var (
	codeFence = regexp.MustCompile("```")
	codeCues  = []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s*(def|class|import|from \S+ import|func|package|#include|public|private|fn|let|const|var)\s`),
		regexp.MustCompile(`(?i)\b(select\b.+\bfrom|insert into|create table)\b`),
		regexp.MustCompile(`[{};]\s*$|=>|->|\(\)\s*[{:]|==|!=|&&|\|\|`),
		regexp.MustCompile(`(?i)\b(python|javascript|typescript|golang|java|c\+\+|rust|sql|bash|regex|function|compile[rd]?|debug|stack ?trace|exception|refactor|unit tests?|api|json|code|script|algorithm)\b`),
		regexp.MustCompile(`\b[a-z_]+[A-Z][a-zA-Z]*\(|\b[a-z_]+_[a-z_]+\(|\w+\.\w+\(`),
	}
	mathLatex = regexp.MustCompile(`\$[^$]+\$|\\(frac|int|sum|sqrt|cdot|times|le|ge|pi|alpha|theta)\b`)
	mathCues  = []*regexp.Regexp{
		regexp.MustCompile(`\d+(\.\d+)?\s*[-+*/^×÷]\s*\d+`),
		regexp.MustCompile(`(?i)\b(solve|equation|integral|derivative|probability|prove|theorem|calculate|compute|how many|how much|sum of|product of|remainder|modulo|prime|factorial|percent(age)?|ratio|average|fraction)\b`),
		regexp.MustCompile(`\b[a-z]\s*[=<>]\s*-?\d|[a-z]\^\d|\b(sin|cos|tan|log|ln|exp)\s*\(`),
		regexp.MustCompile(`(?i)\b(algebra|geometry|calculus|matrix|vector|polynomial|triangle|circle|radius|area|volume)\b`),
	}
)

func cueSignal(s string, fence *regexp.Regexp, cues []*regexp.Regexp) float64 {
	if fence.MatchString(s) {
		return 1
	}
	n := 0
	for _, re := range cues {
		if re.MatchString(s) {
			n++
		}
	}
	return math.Min(1, 0.34*float64(n))
}

func codeSignal(s string) float64 { return cueSignal(s, codeFence, codeCues) }
func mathSignal(s string) float64 { return cueSignal(s, mathLatex, mathCues) }
