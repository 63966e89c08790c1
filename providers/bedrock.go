package providers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// FormatBedrock is Amazon Bedrock's Converse API.
const FormatBedrock Format = "bedrock"

// BedrockService is the service name Bedrock requests are signed for (SigV4's credential
// scope: date/region/bedrock/aws4_request).
const BedrockService = "bedrock"

// The environment variables the bedrock preset reads (FromEnv), besides its API key
// (AWS_BEARER_TOKEN_BEDROCK) and endpoint (AWS_ENDPOINT_URL_BEDROCK_RUNTIME).
const (
	EnvAWSAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvAWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvAWSSessionToken    = "AWS_SESSION_TOKEN"
	EnvAWSRegion          = "AWS_REGION"
	EnvAWSDefaultRegion   = "AWS_DEFAULT_REGION"
)

// AWSConfig is what a Bedrock adapter (FormatBedrock) needs besides a Config's common
// fields: the region it calls and the credentials it signs with. Other formats ignore it.
//
// A Bedrock API key (Config.APIKey, AWS_BEARER_TOKEN_BEDROCK) is sent as
// "Authorization: Bearer" and wins over SigV4 credentials when both are set, as in AWS's
// SDKs. Without one, requests are signed with SigV4 (service "bedrock") with the static
// AccessKeyID, SecretAccessKey and SessionToken, or with what Credentials retrieves.
type AWSConfig struct {
	// Region is the AWS region whose endpoint (bedrock-runtime.{Region}.amazonaws.com) is
	// called and that requests are signed for. A model string may name its own (see
	// Bedrock).
	Region string
	// AccessKeyID, SecretAccessKey and SessionToken are static credentials (SessionToken
	// only for temporary ones). They are never logged or put in errors.
	AccessKeyID, SecretAccessKey, SessionToken string
	// Credentials, when set, supplies the credentials instead of the static fields, for each
	// call: an AWS SDK's credential chain (aws-sdk-go-v2/config), an assumed role. It should
	// cache what it retrieves (aws.CredentialsCache), as it is asked on every call. serve
	// sets the SDK's default chain here when the environment shows AWS credentials other
	// than static keys (a profile, web identity, container credentials; see FromEnv).
	Credentials aws.CredentialsProvider
	// CredentialsSource names where Credentials takes them from ("AWS profile \"dev\"",
	// "container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI)"), for the error of a
	// failed retrieval; "" says nothing.
	CredentialsSource string
	// AccessKeyIDEnv and SecretAccessKeyEnv name where the static credentials were read
	// from, for the "not configured" message; "" is AWS_ACCESS_KEY_ID and
	// AWS_SECRET_ACCESS_KEY.
	AccessKeyIDEnv, SecretAccessKeyEnv string
	// Now is the signing clock; nil is time.Now.
	Now func() time.Time

	// credentialProblem says why the credentials the configuration names (an AWS profile)
	// cannot be used, for the "not configured" message.
	credentialProblem string
	// redact are further values kept out of errors: the container credentials' authorization
	// token, which a failing endpoint may echo.
	redact []string
}

// Bedrock speaks Amazon Bedrock's Converse API, which serves every Bedrock chat model
// (Claude, Llama, Nova, Mistral, …) in one shape: POST
// {base}/model/{modelId}/converse, and /converse-stream for a stream in the AWS event stream
// encoding. The base is https://bedrock-runtime.{region}.amazonaws.com unless
// Config.BaseURL names another (a VPC endpoint, a test server).
//
// The model is Bedrock's model id ("anthropic.claude-3-5-sonnet-20240620-v1:0"), an
// inference profile ("us.anthropic.claude-sonnet-4-20250514-v1:0") or an ARN, escaped in the
// path as AWS's SDKs do (":" as %3A, "/" as %2F). LiteLLM's "converse/" route prefix is
// dropped; a leading region ("us-west-2/meta.llama3-1-70b-instruct-v1:0") and an ARN's
// region name the region called, instead of AWSConfig.Region.
//
// System messages go to "system"; user turns are text, image (base64 data URLs of PNG, JPEG,
// GIF or WebP: Converse takes no image URL) and document (PDF data URLs) blocks; tool
// results are toolResult blocks of a user turn and tool calls toolUse blocks of an assistant
// turn (consecutive turns of one role are merged: Converse wants them alternating). Tools map
// to toolConfig.tools[].toolSpec with inputSchema.json, and tool_choice auto, required and a
// function to toolChoice auto, any and tool; Converse has no "none", so with tool_choice
// none the tools are left out unless the conversation already holds tool calls (Converse
// then requires them declared). parallel_tool_calls false (or, without it,
// Request.SingleToolCall) asks Claude 4.5 and later for one tool call, as LiteLLM does:
// additionalModelRequestFields.tool_choice is toolConfig's choice in Anthropic's spelling
// with disable_parallel_tool_use (see bedrockOneToolCall); Converse has no field of its own
// for it, and other models get nothing. Temperature (at most 1, as
// Converse takes), top_p, stop sequences and max_tokens go to inferenceConfig.
//
// On Claude models, Request.Thinking maps as on the Anthropic adapter (see
// anthropicThinkingFor) into additionalModelRequestFields.thinking (with
// output_config.effort for adaptive thinking), top_k goes to additionalModelRequestFields
// (on Nova to additionalModelRequestFields.inferenceConfig.topK; other models drop it),
// and signed reasoning of the history goes back as reasoningContent blocks when thinking is
// on; Claude's sampling rules (temperature 1 with thinking; temperature or top_p on Claude
// 4.1 and later) are applied. PromptCache puts cachePoint blocks after the system prompt,
// the tools (Claude only: Nova takes none there) and the conversation (before its trailing
// documents, which a cache point may not follow) on Claude and Nova models (with the
// default TTL). A conversation that opens with the assistant gets a user turn before it.
//
// Answers: text, toolUse blocks (tool calls) and reasoningContent (Response.Reasoning, with
// Claude's signatures; redacted reasoning as Redacted). Finish reasons: end_turn and
// stop_sequence → "stop", max_tokens and model_context_window_exceeded → "length",
// tool_use → "tool_calls"; guardrail_intervened and content_filtered fail with
// KindContentFilter, carrying the usage billed. Usage: Bedrock's inputTokens excludes cache
// reads and writes, so PromptTokens is inputTokens + cacheReadInputTokens +
// cacheWriteInputTokens, CachedTokens the reads and CacheCreationTokens the writes.
//
// Streams: messageStart, contentBlockStart (a tool call's id and name), contentBlockDelta
// (text, tool input, reasoning), contentBlockStop, messageStop (the stop reason: the
// finish chunk) and metadata (the usage chunk). An exception message (throttlingException,
// modelStreamErrorException, validationException, …) ends the stream with its classified
// error; a stream that ends before messageStop, inside a message, or with a message whose
// checksums fail is KindStreamBroken.
//
// Errors are classified by x-amzn-errortype (else the body's __type) and the body's message:
// ThrottlingException and ServiceQuotaExceededException → KindRateLimited (Retry-After is
// honoured), ServiceUnavailableException, ModelNotReadyException, InternalServerException
// and ModelErrorException → KindOverloaded, ModelTimeoutException → KindTimeout,
// AccessDeniedException, UnrecognizedClientException and the signature errors → KindAuth,
// ResourceNotFoundException and "The provided model identifier is invalid." →
// KindModelNotFound, ValidationException → KindBadRequest, or KindContextLength when its
// message says the input is too long.
//
// Structured output (response_format json_schema and json_object) is LiteLLM's forced tool
// call: a tool named after the schema (JSON mode: "json_tool_call") whose input schema is
// the requested one (JSON mode: any object) is added to toolConfig, and toolChoice forces
// it on models that take toolChoice (Claude, Nova, Mistral Large; others get the tool
// alone and may answer in text, which is then the answer). With the caller's own tools the
// model is made to call one of them or the answer tool (toolChoice any); a function the
// caller forces stays forced; tool_choice none leaves the caller's tools out. The answer
// tool's input comes back as the answer's text (replacing text the model wrote before it;
// streamed, such text is held until the tool or the end comes), whole or streamed as text deltas, with
// finish reason "stop" (unless a function of the caller's was called too: "tool_calls"),
// never as a tool call. Claude's thinking is left off (Claude refuses a forced tool while
// thinking). A schema whose root is not an object cannot be a tool's input: Check refuses
// it (response_format.json_schema.schema). Converse's native outputConfig.textFormat is not
// used: only some models take it.
//
// Not mapped: the provider's own web search, assistant prefill, embeddings, guardrails and
// one-hour cache points.
type Bedrock struct {
	ep     endpoint
	base   string // Config.BaseURL without its trailing slash; "" for the region's endpoint
	aws    AWSConfig
	signer *v4.Signer
}

// NewBedrock returns a Bedrock Converse adapter.
func NewBedrock(cfg Config) *Bedrock {
	if cfg.Name == "" {
		cfg.Name = "bedrock"
	}
	if cfg.KeyEnv == "" {
		cfg.KeyEnv = "AWS_BEARER_TOKEN_BEDROCK"
	}
	b := &Bedrock{ep: newEndpoint(cfg), base: strings.TrimRight(cfg.BaseURL, "/"), aws: cfg.AWS, signer: v4.NewSigner()}
	b.ep.secrets = append([]string{cfg.AWS.SecretAccessKey, cfg.AWS.SessionToken}, cfg.AWS.redact...)
	b.ep.classify = classifyBedrockResponse
	if b.aws.AccessKeyIDEnv == "" {
		b.aws.AccessKeyIDEnv = EnvAWSAccessKeyID
	}
	if b.aws.SecretAccessKeyEnv == "" {
		b.aws.SecretAccessKeyEnv = EnvAWSSecretAccessKey
	}
	if b.aws.Now == nil {
		b.aws.Now = time.Now
	}
	return b
}

// Name returns the provider prefix.
func (b *Bedrock) Name() string { return b.ep.cfg.Name }

// Configured reports whether the adapter has credentials (a Bedrock API key, or SigV4
// credentials) and somewhere to send them: a region, or a base URL with an API key. A model
// string naming its own region still needs credentials.
func (b *Bedrock) Configured() bool {
	switch {
	case b.ep.cfg.APIKey != "":
		return b.aws.Region != "" || b.base != ""
	case b.hasSigV4():
		return b.aws.Region != ""
	}
	return false
}

func (b *Bedrock) hasSigV4() bool {
	return b.aws.Credentials != nil || b.aws.AccessKeyID != "" && b.aws.SecretAccessKey != ""
}

// awsRegionRE matches an AWS region name ("us-east-1", "us-gov-west-1", "ap-southeast-2").
var awsRegionRE = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d+$`)

// ValidAWSRegion reports whether s is shaped like an AWS region name ("eu-west-1").
func ValidAWSRegion(s string) bool { return awsRegionRE.MatchString(s) }

// bedrockTarget is the model id a model string calls and the region it names ("" when
// none): LiteLLM's "converse/" route prefix is dropped, a leading region segment
// ("us-east-1/…") names the region, and so does an ARN ("arn:aws:bedrock:eu-west-1:…").
func bedrockTarget(model string) (id, region string) {
	id = strings.TrimPrefix(model, "converse/")
	if seg, rest, ok := strings.Cut(id, "/"); ok && rest != "" && ValidAWSRegion(seg) {
		id, region = rest, seg
	}
	if strings.HasPrefix(id, "arn:") {
		if f := strings.SplitN(id, ":", 5); len(f) == 5 && ValidAWSRegion(f[3]) {
			region = f[3]
		}
	}
	return id, region
}

// routableAs: a model string is listed as its model id (LiteLLM's converse/ prefix and a
// leading region dropped); an ARN is routable as it is (see RoutableAs).
func (b *Bedrock) routableAs(model string) (string, bool) {
	id, _ := bedrockTarget(model)
	return id, strings.HasPrefix(id, "arn:")
}

// bedrockEscape escapes a model id as one path segment the way AWS's SDKs do: every byte
// but the unreserved ones (letters, digits, '-', '.', '_', '~') as %XX.
func bedrockEscape(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := range len(s) {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// bedrockClaude reports whether the model id is an Anthropic Claude model (directly, through
// an inference profile, or a system profile's ARN).
func bedrockClaude(id string) bool { return strings.Contains(strings.ToLower(id), "claude-") }

// bedrockCaches reports whether the model takes cachePoint blocks (Claude and Nova).
func bedrockCaches(id string) bool {
	l := strings.ToLower(id)
	return bedrockClaude(l) || strings.Contains(l, "amazon.nova")
}

// The Converse request body.
type bedrockRequest struct {
	Messages        []bedrockMessage  `json:"messages"`
	System          []bedrockBlock    `json:"system,omitempty"`
	InferenceConfig *bedrockInference `json:"inferenceConfig,omitempty"`
	ToolConfig      *bedrockTools     `json:"toolConfig,omitempty"`
	// AdditionalModelRequestFields are passed to the model as they are: Claude's thinking,
	// top_k and tool_choice (for disable_parallel_tool_use).
	AdditionalModelRequestFields map[string]any `json:"additionalModelRequestFields,omitempty"`
}

type bedrockMessage struct {
	Role    string         `json:"role"`
	Content []bedrockBlock `json:"content"`
}

// bedrockBlock is a content block; exactly one member is set.
type bedrockBlock struct {
	Text             string             `json:"text,omitempty"`
	Image            *bedrockMedia      `json:"image,omitempty"`
	Document         *bedrockMedia      `json:"document,omitempty"`
	ToolUse          *bedrockToolUse    `json:"toolUse,omitempty"`
	ToolResult       *bedrockToolResult `json:"toolResult,omitempty"`
	ReasoningContent *bedrockReasoning  `json:"reasoningContent,omitempty"`
	CachePoint       *bedrockCachePoint `json:"cachePoint,omitempty"`
}

// bedrockMedia is an image or a document: its format ("png", "pdf"), a document's name and
// its bytes (base64 in JSON).
type bedrockMedia struct {
	Format string `json:"format"`
	Name   string `json:"name,omitempty"`
	Source struct {
		Bytes string `json:"bytes"`
	} `json:"source"`
}

type bedrockToolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type bedrockToolResult struct {
	ToolUseID string         `json:"toolUseId"`
	Content   []bedrockBlock `json:"content"`
}

// bedrockReasoning is a reasoningContent block: reasoning text with Claude's signature, or
// redacted reasoning (base64).
type bedrockReasoning struct {
	ReasoningText *struct {
		Text      string `json:"text"`
		Signature string `json:"signature,omitempty"`
	} `json:"reasoningText,omitempty"`
	RedactedContent string `json:"redactedContent,omitempty"`
}

type bedrockCachePoint struct {
	Type string `json:"type"` // "default"
}

var defaultCachePoint = &bedrockCachePoint{Type: "default"}

type bedrockInference struct {
	MaxTokens     int      `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

type bedrockTools struct {
	Tools      []bedrockTool      `json:"tools"`
	ToolChoice *bedrockToolChoice `json:"toolChoice,omitempty"`
}

// bedrockTool is a toolSpec, or a cachePoint after the tools.
type bedrockTool struct {
	ToolSpec   *bedrockToolSpec   `json:"toolSpec,omitempty"`
	CachePoint *bedrockCachePoint `json:"cachePoint,omitempty"`
}

type bedrockToolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema struct {
		JSON json.RawMessage `json:"json"`
	} `json:"inputSchema"`
}

// bedrockToolChoice is {"auto": {}}, {"any": {}} or {"tool": {"name": …}}.
type bedrockToolChoice struct {
	Auto *struct{} `json:"auto,omitempty"`
	Any  *struct{} `json:"any,omitempty"`
	Tool *struct {
		Name string `json:"name"`
	} `json:"tool,omitempty"`
}

// bedrockImageFormats maps the image types Converse takes to its format names.
var bedrockImageFormats = map[string]string{"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}

// bedrockDocName is a document's name as Converse takes it (letters, digits, single spaces,
// '-', '(', ')', '[' and ']'), from its file name without the extension; "document" when
// nothing is left. Names are made unique within a request with a " (n)" suffix.
func bedrockDocName(filename string, taken map[string]bool) string {
	if i := strings.LastIndexByte(filename, '.'); i > 0 {
		filename = filename[:i]
	}
	var b strings.Builder
	space := false
	for _, r := range filename {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-()[]", r))
		if !ok {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	name := b.String()
	if name == "" {
		name = "document"
	}
	base := name
	for n := 2; taken[name]; n++ {
		name = fmt.Sprintf("%s (%d)", base, n)
	}
	taken[name] = true
	return name
}

// bedrockParts is a user turn's parts as blocks; i is the turn's index in the request, for
// the field an UnsupportedError names. Whitespace-only text is left out (Converse refuses
// blank text blocks).
func (b *Bedrock) bedrockParts(i int, parts []Part, docs map[string]bool) ([]bedrockBlock, error) {
	out := make([]bedrockBlock, 0, len(parts))
	for j, p := range parts {
		switch {
		case p.Image != nil:
			mt, data, ok := ParseDataURL(p.Image.URL)
			if !ok {
				return nil, &UnsupportedError{Provider: b.Name(), Field: fmt.Sprintf("messages[%d].content[%d].image_url", i, j),
					Reason: "Bedrock takes images as base64 data URLs only, not by URL"}
			}
			if sniffed := ImageMediaType(*p.Image); sniffed != "" {
				mt = sniffed
			}
			format, known := bedrockImageFormats[mt]
			if !known {
				return nil, &UnsupportedError{Provider: b.Name(), Field: fmt.Sprintf("messages[%d].content[%d].image_url", i, j),
					Reason: "Bedrock takes PNG, JPEG, GIF and WebP images, not " + mt}
			}
			img := &bedrockMedia{Format: format}
			img.Source.Bytes = data
			out = append(out, bedrockBlock{Image: img})
		case p.File != nil:
			_, data, ok := ParseDataURL(p.File.URL)
			if !ok {
				return nil, &UnsupportedError{Provider: b.Name(), Field: fmt.Sprintf("messages[%d].content[%d].file.file_data", i, j),
					Reason: "Bedrock takes documents as base64 data URLs only, not by URL"}
			}
			doc := &bedrockMedia{Format: "pdf", Name: bedrockDocName(p.File.Filename, docs)}
			doc.Source.Bytes = data
			out = append(out, bedrockBlock{Document: doc})
		case strings.TrimSpace(p.Text) != "":
			out = append(out, bedrockBlock{Text: p.Text})
		}
	}
	return out, nil
}

// bedrockReasoningBlocks are the reasoning blocks of an assistant turn that Claude takes
// back: signed reasoning text and redacted reasoning; the rest came from elsewhere and is
// dropped.
func bedrockReasoningBlocks(blocks []bedrockBlock, rs []ReasoningBlock) []bedrockBlock {
	for i := range rs {
		switch r := &rs[i]; {
		case r.Signature != "":
			rc := &bedrockReasoning{ReasoningText: &struct {
				Text      string `json:"text"`
				Signature string `json:"signature,omitempty"`
			}{Text: r.Text, Signature: r.Signature}}
			blocks = append(blocks, bedrockBlock{ReasoningContent: rc})
		case r.Redacted != "":
			blocks = append(blocks, bedrockBlock{ReasoningContent: &bedrockReasoning{RedactedContent: r.Redacted}})
		}
	}
	return blocks
}

// body is the Converse body of req for the model id. Its error is an *UnsupportedError for
// what Converse cannot be sent.
func (b *Bedrock) body(req *Request, id string) (*bedrockRequest, error) {
	answer, err := b.outputSpec(req)
	if err != nil {
		return nil, err
	}
	claude := bedrockClaude(id)
	r := *req
	r.Model = id
	out := &bedrockRequest{}
	// Converse's stopSequences members are at least one character long: an empty stop
	// string is left out for every model (Claude's blank ones too, below).
	inf := bedrockInference{MaxTokens: max(req.MaxTokens, 0), TopP: req.TopP, StopSequences: nonEmptyStops(req.Stop)}
	if t := req.Temperature; t != nil {
		inf.Temperature = t
		if *t > 1 { // Converse's range is 0-1, OpenAI's 0-2: the most random setting instead of a refusal
			one := 1.0
			inf.Temperature = &one
		}
	}
	extra := map[string]any{}
	thinking := false
	if claude {
		inf.StopSequences = anthropicStops(req.Stop)
		if th, oc, maxTokens := anthropicThinkingFor(&r); th != nil {
			thinking = true
			extra["thinking"] = th
			if oc != nil {
				extra["output_config"] = oc
			}
			inf.MaxTokens = maxTokens
			// Claude thinks only at temperature 1, without top_k, with top_p of 0.95 or more.
			if t := inf.Temperature; t != nil && *t != 1 {
				inf.Temperature = nil
			}
			if p := inf.TopP; p != nil && *p < 0.95 {
				inf.TopP = nil
			}
		} else if req.TopK != nil {
			extra["top_k"] = *req.TopK
		}
		if inf.Temperature != nil && inf.TopP != nil && anthropicOneSampler(id) {
			inf.TopP = nil // Claude 4.1 and later take one of them; the temperature is kept
		}
	}
	if req.TopK != nil && strings.Contains(strings.ToLower(id), "amazon.nova") {
		extra["inferenceConfig"] = map[string]int{"topK": *req.TopK} // Nova's own field
	}
	if inf.MaxTokens > 0 || inf.Temperature != nil || inf.TopP != nil || len(inf.StopSequences) > 0 {
		out.InferenceConfig = &inf
	}
	if len(extra) > 0 {
		out.AdditionalModelRequestFields = extra
	}

	var system []string
	historyTools := map[string]bool{}
	docs := map[string]bool{}
	add := func(role string, blocks []bedrockBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, blocks...)
			return
		}
		out.Messages = append(out.Messages, bedrockMessage{Role: role, Content: blocks})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch {
		case m.Role == "system" || m.Role == "developer":
			if strings.TrimSpace(m.Content) != "" {
				system = append(system, m.Content)
			}
		case m.Role == "tool":
			content := m.Content
			if strings.TrimSpace(content) == "" {
				content = "(empty)" // Converse refuses a blank text block
			}
			add("user", []bedrockBlock{{ToolResult: &bedrockToolResult{ToolUseID: anthropicToolID(m.ToolCallID), Content: []bedrockBlock{{Text: content}}}}})
		case m.Role == "assistant":
			var blocks []bedrockBlock
			if thinking && claude {
				blocks = bedrockReasoningBlocks(blocks, m.Reasoning)
			}
			if strings.TrimSpace(m.Content) != "" {
				blocks = append(blocks, bedrockBlock{Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, bedrockBlock{ToolUse: &bedrockToolUse{ToolUseID: anthropicToolID(c.ID), Name: c.Name, Input: argumentsObject(c.Arguments)}})
				historyTools[c.Name] = true
			}
			if len(m.ToolCalls) == 0 && !slices.ContainsFunc(blocks, func(b bedrockBlock) bool { return b.Text != "" }) {
				continue // an empty answer (a refusal, a cut answer) is left out, its reasoning with it
			}
			add("assistant", blocks)
		default:
			if len(m.Parts) > 0 {
				blocks, err := b.bedrockParts(i, m.Parts, docs)
				if err != nil {
					return nil, err
				}
				add("user", blocks)
			} else if strings.TrimSpace(m.Content) != "" {
				add("user", []bedrockBlock{{Text: m.Content}})
			}
		}
	}
	if len(system) > 0 {
		out.System = []bedrockBlock{{Text: strings.Join(system, "\n\n")}}
	}
	if out.Messages == nil {
		out.Messages = []bedrockMessage{}
	}
	if len(out.Messages) > 0 && out.Messages[0].Role == "assistant" {
		// Converse refuses a conversation that opens with the assistant ("A conversation
		// must start with a user message"), as a history with the assistant's greeting
		// after the system prompt does: like LiteLLM, a user turn is put before it.
		out.Messages = slices.Insert(out.Messages, 0, bedrockMessage{Role: "user", Content: []bedrockBlock{{Text: bedrockUserContinue}}})
	}

	none := req.ToolChoice != nil && req.ToolChoice.Mode == ToolChoiceNone
	var tools []bedrockTool
	if len(req.Tools) > 0 && (!none || len(historyTools) > 0) {
		for _, t := range req.Tools {
			schema, _ := anthropicInputSchema(t.Parameters)
			spec := &bedrockToolSpec{Name: t.Name, Description: t.Description}
			spec.InputSchema.JSON = schema
			tools = append(tools, bedrockTool{ToolSpec: spec})
			delete(historyTools, t.Name)
		}
	}
	if len(req.Tools) == 0 || none {
		// Converse refuses toolUse and toolResult blocks in a request without toolConfig: the
		// functions the history called are declared, as open objects.
		for _, n := range slices.Sorted(maps.Keys(historyTools)) {
			spec := &bedrockToolSpec{Name: n}
			spec.InputSchema.JSON = openObjectSchema
			tools = append(tools, bedrockTool{ToolSpec: spec})
		}
	}
	if answer != nil {
		tools = append(tools, bedrockTool{ToolSpec: answer})
	}
	if len(tools) > 0 {
		out.ToolConfig = &bedrockTools{Tools: tools}
		c := req.ToolChoice
		if c != nil && len(req.Tools) > 0 {
			switch c.Mode {
			case ToolChoiceAuto:
				out.ToolConfig.ToolChoice = &bedrockToolChoice{Auto: &struct{}{}}
			case ToolChoiceRequired:
				out.ToolConfig.ToolChoice = &bedrockToolChoice{Any: &struct{}{}}
			case ToolChoiceFunction:
				out.ToolConfig.ToolChoice = bedrockForceTool(c.Name)
			}
		}
		if answer != nil && bedrockTakesToolChoice(id) {
			switch {
			case c != nil && c.Mode == ToolChoiceFunction && len(req.Tools) > 0:
				// The caller forced one of its own functions: it is called instead.
			case len(req.Tools) > 0 && (c == nil || c.Mode != ToolChoiceNone):
				// Either one of the caller's functions or the answer.
				out.ToolConfig.ToolChoice = &bedrockToolChoice{Any: &struct{}{}}
			default:
				out.ToolConfig.ToolChoice = bedrockForceTool(answer.Name)
			}
		}
	}
	if out.ToolConfig != nil && len(req.Tools) > 0 && !none && req.oneToolCallAsked() && bedrockDisablesParallelToolUse(id) {
		if out.AdditionalModelRequestFields == nil {
			out.AdditionalModelRequestFields = map[string]any{}
		}
		out.AdditionalModelRequestFields["tool_choice"] = bedrockOneToolCall(out.ToolConfig.ToolChoice)
	}
	if req.PromptCache && bedrockCaches(id) {
		if len(out.System) > 0 {
			out.System = append(out.System, bedrockBlock{CachePoint: defaultCachePoint})
		}
		if out.ToolConfig != nil && claude {
			// Nova takes cache points in system and messages only, not among the tools.
			out.ToolConfig.Tools = append(out.ToolConfig.Tools, bedrockTool{CachePoint: defaultCachePoint})
		}
		if n := len(out.Messages); n > 0 {
			out.Messages[n-1].Content = withCachePoint(out.Messages[n-1].Content)
		}
	}
	return out, nil
}

// bedrockJSONObjectSchema is the output tool's input schema for JSON mode (json_object):
// any object, its properties the model's choice (LiteLLM's).
var bedrockJSONObjectSchema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":true}`)

// bedrockOutputTool is the name of the tool that carries req's structured output, "" when
// req asks for none: the json_schema's name, else LiteLLM's "json_tool_call" (see
// outputToolName).
//
// The functions the history called count as the request's: without tools (or with
// tool_choice none) they are declared to Converse too, which refuses two tools of one name.
func bedrockOutputTool(req *Request) string {
	if !req.ResponseFormat.JSON() {
		return ""
	}
	r := *req
	r.Tools = slices.Clip(r.Tools)
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			r.Tools = append(r.Tools, Tool{Name: c.Name})
		}
	}
	return outputToolName(&r, "json_tool_call")
}

// outputSpec is the toolSpec of req's structured output (nil when req asks for none): the
// requested schema as its input schema, an open object for JSON mode. A schema whose root
// is not an object is an *UnsupportedError: a tool's input is an object.
func (b *Bedrock) outputSpec(req *Request) (*bedrockToolSpec, error) {
	name := bedrockOutputTool(req)
	if name == "" {
		return nil, nil
	}
	f := req.ResponseFormat
	spec := &bedrockToolSpec{Name: name, Description: f.Description}
	spec.InputSchema.JSON = bedrockJSONObjectSchema
	if f.Type == ResponseJSONSchema && len(bytes.TrimSpace(f.Schema)) > 0 {
		schema, ok := anthropicInputSchema(f.Schema)
		if !ok {
			return nil, &UnsupportedError{Provider: b.Name(), Field: "response_format.json_schema.schema",
				Reason: `Bedrock structured output is a tool's input, which must be an object: the schema's root needs "type": "object" or properties`}
		}
		spec.InputSchema.JSON = schema
	}
	if spec.Description == "" {
		spec.Description = "Give your final answer by calling this tool: its input is the answer."
	}
	return spec, nil
}

// bedrockTakesToolChoice reports whether the model takes toolChoice any and tool (Claude, Nova
// and Mistral Large; Llama, Cohere and others refuse them with a ValidationException).
func bedrockTakesToolChoice(id string) bool {
	l := strings.ToLower(id)
	return bedrockClaude(l) || strings.Contains(l, "amazon.nova") || strings.Contains(l, "mistral.mistral-large")
}

// bedrockDisablesParallelToolUse reports whether a Claude model on Bedrock is sent
// Anthropic's disable_parallel_tool_use when one tool call is asked: Claude 4.5 and later,
// the models LiteLLM's catalogue marks supports_parallel_tool_use_config (LiteLLM sends it to
// those only: litellm/llms/bedrock/chat/converse_transformation.py, BerriAI/litellm#34347).
func bedrockDisablesParallelToolUse(id string) bool {
	major, minor, _, ok := claudeVersion(id)
	return ok && (major > 4 || major == 4 && minor >= 5)
}

// bedrockOneToolCall is the Anthropic tool_choice put in additionalModelRequestFields to
// ask for at most one tool call: the toolChoice sent in toolConfig (auto when none is),
// spelt as Anthropic's, with disable_parallel_tool_use. Bedrock merges it into the
// tool_choice it makes of toolConfig, so both must name the same type: one without a type
// is refused ("tool_choice.type: Field required"), one of another type conflicts.
func bedrockOneToolCall(c *bedrockToolChoice) anthropicToolChoice {
	out := anthropicToolChoice{Type: "auto", DisableParallelToolUse: true}
	switch {
	case c == nil:
	case c.Any != nil:
		out.Type = "any"
	case c.Tool != nil:
		out.Type, out.Name = "tool", c.Tool.Name
	}
	return out
}

// bedrockForceTool is toolChoice {"tool": {"name": name}}.
func bedrockForceTool(name string) *bedrockToolChoice {
	return &bedrockToolChoice{Tool: &struct {
		Name string `json:"name"`
	}{Name: name}}
}

// bedrockUserContinue is the user turn put before a conversation that opens with the
// assistant (LiteLLM's default continue message).
const bedrockUserContinue = "Please continue."

// nonEmptyStops is stop without its empty strings (stop itself when it has none).
func nonEmptyStops(stop []string) []string {
	if !slices.Contains(stop, "") {
		return stop
	}
	var out []string
	for _, s := range stop {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// withCachePoint puts a cache point at the end of a turn's content, or before its trailing
// documents: Bedrock refuses a cache point right after a document block. A turn of
// documents alone gets none.
func withCachePoint(content []bedrockBlock) []bedrockBlock {
	at := len(content)
	for at > 0 && content[at-1].Document != nil {
		at--
	}
	if at == 0 {
		return content
	}
	return slices.Insert(content, at, bedrockBlock{CachePoint: defaultCachePoint})
}

// Check refuses what Converse cannot be sent: a JSON schema whose root is not an object,
// images and documents given by URL, images of other types than PNG, JPEG, GIF and WebP.
func (b *Bedrock) Check(model string, req *Request) error {
	if !req.ResponseFormat.JSON() && !hasImages(req.Messages) {
		return nil
	}
	id, _ := bedrockTarget(model)
	_, err := b.body(req, id)
	return err
}

// notConfigured fails a call that lacks credentials or a region, naming what to set.
func (b *Bedrock) notConfigured(model, region string) error {
	var msg string
	switch {
	case b.ep.cfg.APIKey == "" && !b.hasSigV4():
		msg = fmt.Sprintf("provider %q is not configured: set %s (a Bedrock API key), or %s and %s",
			b.Name(), b.ep.cfg.KeyEnv, b.aws.AccessKeyIDEnv, b.aws.SecretAccessKeyEnv)
		if b.aws.AccessKeyIDEnv == EnvAWSAccessKeyID {
			// The standard variables: the default credential chain is open to this provider.
			msg += fmt.Sprintf(", or %s (a profile of the shared config files; web identity and container credentials are used when their variables are set, an EC2 instance role with aws_instance_role in the providers config)", EnvAWSProfile)
		}
		if p := b.aws.credentialProblem; p != "" {
			msg += " (" + p + ")"
		}
	case region == "" && (b.base == "" || b.ep.cfg.APIKey == ""):
		msg = fmt.Sprintf("provider %q has no region: set %s (or %s), or the provider's region", b.Name(), EnvAWSRegion, EnvAWSDefaultRegion)
	default:
		return nil
	}
	pe := b.ep.errorf(model, KindAuth, "%s", msg)
	pe.Err = ErrNotConfigured
	return pe
}

func (b *Bedrock) start(ctx context.Context, req *Request, stream bool) (*call, error) {
	id, region := bedrockTarget(req.Model)
	if region == "" {
		region = b.aws.Region
	}
	if err := b.notConfigured(req.Model, region); err != nil {
		return nil, err
	}
	if req.Search {
		return nil, b.ep.errorf(req.Model, KindBadRequest, "model %s/%s does not support search", b.Name(), req.Model)
	}
	if req.AssistantPrefix != "" {
		return nil, b.ep.errNoPrefill(req.Model)
	}
	body, err := b.body(req, id)
	if err != nil {
		return nil, b.ep.errorf(req.Model, KindBadRequest, "%v", err)
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, &Error{Provider: b.Name(), Model: req.Model, Kind: KindBadRequest, Message: "encoding request", Err: err}
	}
	base := b.base
	if base == "" {
		base = "https://bedrock-runtime." + region + ".amazonaws.com"
	}
	u := base + "/model/" + bedrockEscape(id) + "/converse"
	h := http.Header{}
	if stream {
		u += "-stream"
		h.Set("Accept", "application/vnd.amazon.eventstream")
	} else {
		h.Set("Accept", "application/json")
	}
	if key := b.ep.cfg.APIKey; key != "" {
		h.Set("Authorization", "Bearer "+key)
		return b.ep.send(ctx, req.Model, u, h, payload, nil)
	}
	creds, err := b.credentials(ctx)
	if err != nil {
		pe := b.ep.errorf(req.Model, KindAuth, "retrieving AWS credentials: %v", err)
		pe.Err = err
		return nil, pe
	}
	sign := func(r *http.Request, p []byte) error {
		sum := sha256.Sum256(p)
		return b.signer.SignHTTP(r.Context(), creds, r, hex.EncodeToString(sum[:]), BedrockService, region, b.aws.Now())
	}
	// The credentials actually used are redacted from the call's errors: a provider's
	// (rotated, assumed-role) ones are not among the endpoint's static secrets.
	return b.ep.sendSigned(ctx, req.Model, u, h, payload, nil, sign, []string{creds.SecretAccessKey, creds.SessionToken})
}

// credentials are the static credentials, or what the Credentials provider retrieves.
func (b *Bedrock) credentials(ctx context.Context) (aws.Credentials, error) {
	if p := b.aws.Credentials; p != nil {
		c, err := p.Retrieve(ctx)
		if err != nil {
			if src := b.aws.CredentialsSource; src != "" {
				return aws.Credentials{}, fmt.Errorf("providers: bedrock credentials from %s: %w", src, err)
			}
			return aws.Credentials{}, fmt.Errorf("providers: bedrock credentials: %w", err)
		}
		return c, nil
	}
	return aws.Credentials{AccessKeyID: b.aws.AccessKeyID, SecretAccessKey: b.aws.SecretAccessKey, SessionToken: b.aws.SessionToken}, nil
}

// bedrockUsage is Converse's token usage; inputTokens excludes cache reads and writes.
type bedrockUsage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	TotalTokens           int `json:"totalTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens"`
}

func (u bedrockUsage) usage() Usage {
	return Usage{
		PromptTokens:        u.InputTokens + u.CacheReadInputTokens + u.CacheWriteInputTokens,
		CompletionTokens:    u.OutputTokens,
		CachedTokens:        u.CacheReadInputTokens,
		CacheCreationTokens: u.CacheWriteInputTokens,
	}
}

// bedrockFinish maps a stopReason to a finish reason; filtered is true for the stops of a
// guardrail or content filter, which fail with KindContentFilter instead.
func bedrockFinish(stop string) (finish string, filtered bool) {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop", false
	case "max_tokens", "model_context_window_exceeded":
		return "length", false
	case "tool_use":
		return "tool_calls", false
	case "guardrail_intervened", "content_filtered":
		return "content_filter", true
	}
	return stop, false
}

// bedrockOutBlock is a content block of an answer.
type bedrockOutBlock struct {
	Text    *string `json:"text"`
	ToolUse *struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"toolUse"`
	ReasoningContent *struct {
		ReasoningText *struct {
			Text      string `json:"text"`
			Signature string `json:"signature"`
		} `json:"reasoningText"`
		RedactedContent string `json:"redactedContent"`
	} `json:"reasoningContent"`
}

type bedrockResponse struct {
	Output struct {
		Message struct {
			Content []bedrockOutBlock `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string       `json:"stopReason"`
	Usage      bedrockUsage `json:"usage"`
}

// Complete sends a Converse request.
func (b *Bedrock) Complete(ctx context.Context, req *Request) (*Response, error) {
	c, err := b.start(ctx, req, false)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	raw, err := c.readAll(maxResponseBody)
	if err != nil {
		return nil, err
	}
	var r bedrockResponse
	if err := decodeUpstream(raw, &r); err != nil {
		return nil, c.malformedBody(raw, int64(len(raw)), err, "response body")
	}
	if r.StopReason == "" {
		return nil, c.failure(KindStreamBroken, "response without stopReason", nil)
	}
	u := r.Usage.usage()
	finish, filtered := bedrockFinish(r.StopReason)
	if filtered {
		e := c.failure(KindContentFilter, "the answer was blocked (stopReason "+r.StopReason+")", nil)
		if u.PromptTokens != 0 || u.CompletionTokens != 0 {
			e.Usage = &u
		}
		return nil, e
	}
	resp := &Response{FinishReason: finish, Usage: u}
	var text strings.Builder
	out := bedrockOutputTool(req)
	answered := false
	for _, blk := range r.Output.Message.Content {
		switch {
		case blk.Text != nil:
			text.WriteString(*blk.Text)
		case blk.ToolUse != nil && out != "" && blk.ToolUse.Name == out:
			// Structured output: the output tool's input is the answer, replacing any
			// preamble the model wrote before it.
			answered = true
			text.Reset()
			args := bytes.TrimSpace(blk.ToolUse.Input)
			if len(args) == 0 || string(args) == "null" {
				args = []byte("{}")
			}
			text.Write(args)
		case blk.ToolUse != nil:
			args := string(bytes.TrimSpace(blk.ToolUse.Input))
			if args == "" || args == "null" {
				args = "{}"
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: blk.ToolUse.ToolUseID, Name: blk.ToolUse.Name, Arguments: args})
		case blk.ReasoningContent != nil && blk.ReasoningContent.ReasoningText != nil:
			rt := blk.ReasoningContent.ReasoningText
			resp.Reasoning = append(resp.Reasoning, ReasoningBlock{Text: rt.Text, Signature: rt.Signature})
		case blk.ReasoningContent != nil && blk.ReasoningContent.RedactedContent != "":
			resp.Reasoning = append(resp.Reasoning, ReasoningBlock{Redacted: blk.ReasoningContent.RedactedContent})
		}
	}
	if answered && len(resp.ToolCalls) == 0 && r.StopReason == "tool_use" {
		resp.FinishReason = "stop"
	}
	resp.Text = text.String()
	return resp, nil
}

// Stream starts a ConverseStream request.
func (b *Bedrock) Stream(ctx context.Context, req *Request) (Stream, error) {
	c, err := b.start(ctx, req, true)
	if err != nil {
		return nil, err
	}
	w := &waitReader{r: c.body}
	return &bedrockStream{streamState: streamState{c: c, wait: w}, events: newEventStreamReader(w), thoughtBlock: -1, output: bedrockOutputTool(req)}, nil
}

// bedrockEvent is the payload of a ConverseStream event (all event types in one).
type bedrockEvent struct {
	ContentBlockIndex int `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta struct {
		Text    string `json:"text"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
		ReasoningContent *struct {
			Text            string `json:"text"`
			Signature       string `json:"signature"`
			RedactedContent string `json:"redactedContent"`
		} `json:"reasoningContent"`
	} `json:"delta"`
	StopReason string        `json:"stopReason"`
	Usage      *bedrockUsage `json:"usage"`
}

type bedrockStream struct {
	streamState
	events *eventStreamReader

	started  bool   // messageStart came
	stopped  bool   // messageStop came: a clean end of the body completes the answer
	filtered string // the stop reason of a blocked answer, failed once its usage is known

	// tools are the open tool calls by contentBlockIndex (their deltas may interleave);
	// calls counts the tool calls so far.
	tools  map[int]*bedrockOpenTool
	calls  int
	deltas [1]ToolCallDelta // backing array of Chunk.ToolCalls

	// output is the name of the structured-output tool ("" if none), whose input is relayed
	// as text; answered is true once its block started.
	output   string
	answered bool
	// held is the text of a structured-output answer before its tool (a preamble, which
	// the tool's input replaces as in Complete), sent at messageStop when no tool came;
	// finish is the finish reason held back behind it.
	held   strings.Builder
	finish string

	// thoughts counts the reasoning blocks so far; thoughtBlock is the contentBlockIndex of
	// the last one.
	thoughts     int
	thoughtBlock int
}

// bedrockOpenTool is a tool call whose block is open: its index among the calls, whether
// input arrived for it (a call without input gets "{}"), and whether it is the structured
// output's tool (its input relayed as text, not as a call).
type bedrockOpenTool struct {
	index    int
	gotInput bool
	answer   bool
}

// bedrockStreamEvents are the ConverseStream events; others (added later) are skipped.
var bedrockStreamEvents = map[string]bool{"messageStart": true, "contentBlockStart": true, "contentBlockDelta": true,
	"contentBlockStop": true, "messageStop": true, "metadata": true}

func (s *bedrockStream) toolDelta(d ToolCallDelta) Chunk {
	s.deltas[0] = d
	return Chunk{ToolCalls: s.deltas[:1:1]}
}

// reasoning is a chunk with one fragment of the reasoning block at contentBlockIndex block.
func (s *bedrockStream) reasoning(block int, d ReasoningDelta) Chunk {
	if s.thoughts == 0 || block != s.thoughtBlock {
		s.thoughts++
		s.thoughtBlock = block
	}
	d.Index = s.thoughts - 1
	return Chunk{Reasoning: &d}
}

// Recv returns the next text, tool-call, reasoning, finish or usage chunk, io.EOF once the
// body ended after messageStop, or an *Error.
func (s *bedrockStream) Recv() (Chunk, error) {
	if s.err != nil {
		return Chunk{}, s.err
	}
	if f := s.finish; f != "" {
		s.finish = ""
		return Chunk{FinishReason: f}, nil
	}
	for {
		m, err := s.events.next()
		if err != nil {
			return Chunk{}, s.failRead(err)
		}
		switch m.messageType {
		case "exception":
			_, msg := parseBedrockError(m.payload)
			if msg == "" {
				msg = m.exceptionType
			}
			return Chunk{}, s.fail(bedrockErrorKind(m.exceptionType, 0, msg, originalStatus(m.payload)), msg, nil)
		case "error":
			return Chunk{}, s.fail(bedrockErrorKind(m.errorCode, 0, m.errorMessage, 0), m.errorCode+": "+m.errorMessage, nil)
		case "event", "":
		default:
			continue
		}
		if !bedrockStreamEvents[m.eventType] {
			continue
		}
		var e bedrockEvent
		if err := decodeUpstream(m.payload, &e); err != nil {
			return Chunk{}, s.fail(KindStreamBroken, "malformed stream event "+quote(m.eventType), err)
		}
		switch m.eventType {
		case "messageStart":
			s.started = true
		case "contentBlockStart":
			if e.Start != nil && e.Start.ToolUse != nil {
				if s.tools == nil {
					s.tools = map[int]*bedrockOpenTool{}
				}
				if s.output != "" && e.Start.ToolUse.Name == s.output {
					s.tools[e.ContentBlockIndex] = &bedrockOpenTool{answer: true}
					s.answered = true
					s.held.Reset()
					continue
				}
				s.tools[e.ContentBlockIndex] = &bedrockOpenTool{index: s.calls}
				s.calls++
				return s.toolDelta(ToolCallDelta{Index: s.calls - 1, ID: e.Start.ToolUse.ToolUseID, Name: e.Start.ToolUse.Name}), nil
			}
		case "contentBlockDelta":
			d := &e.Delta
			switch {
			case d.Text != "" && s.output != "" && !s.answered:
				s.held.WriteString(d.Text)
			case d.Text != "":
				return Chunk{Text: d.Text}, nil
			case d.ToolUse != nil && d.ToolUse.Input != "" && s.tools[e.ContentBlockIndex] != nil:
				t := s.tools[e.ContentBlockIndex]
				t.gotInput = true
				if t.answer {
					return Chunk{Text: d.ToolUse.Input}, nil
				}
				return s.toolDelta(ToolCallDelta{Index: t.index, Arguments: d.ToolUse.Input}), nil
			case d.ReasoningContent != nil:
				rc := d.ReasoningContent
				switch {
				case rc.Text != "":
					return s.reasoning(e.ContentBlockIndex, ReasoningDelta{Text: rc.Text}), nil
				case rc.Signature != "":
					return s.reasoning(e.ContentBlockIndex, ReasoningDelta{Signature: rc.Signature}), nil
				case rc.RedactedContent != "":
					return s.reasoning(e.ContentBlockIndex, ReasoningDelta{Redacted: rc.RedactedContent}), nil
				}
			}
		case "contentBlockStop":
			if t := s.tools[e.ContentBlockIndex]; t != nil {
				delete(s.tools, e.ContentBlockIndex)
				switch {
				case !t.gotInput && t.answer:
					return Chunk{Text: "{}"}, nil
				case !t.gotInput:
					return s.toolDelta(ToolCallDelta{Index: t.index, Arguments: "{}"}), nil
				}
			}
		case "messageStop":
			if !s.started {
				return Chunk{}, s.fail(KindStreamBroken, "messageStop without messageStart", nil)
			}
			s.stopped = true
			finish, filtered := bedrockFinish(e.StopReason)
			if filtered {
				s.filtered = e.StopReason // failed with the usage, which metadata brings next
				continue
			}
			if s.answered && s.calls == 0 && e.StopReason == "tool_use" {
				finish = "stop" // structured output (see bedrockOutputTool)
			}
			if s.held.Len() > 0 {
				text := s.held.String()
				s.held.Reset()
				s.finish = finish
				return Chunk{Text: text}, nil
			}
			return Chunk{FinishReason: finish}, nil
		case "metadata":
			var u *Usage
			if e.Usage != nil {
				v := e.Usage.usage()
				u = &v
			}
			if s.filtered != "" {
				return Chunk{}, s.failBilled(KindContentFilter, "the answer was blocked (stopReason "+s.filtered+")", u)
			}
			if u != nil {
				return Chunk{Usage: u}, nil
			}
		}
	}
}

// failRead ends the stream on an error of the event reader: the end of the body (a whole
// answer after messageStop, else a broken stream), a cut or malformed message, an error
// document in place of the stream, or a failed read.
func (s *bedrockStream) failRead(err error) error {
	var doc *errEventJSON
	switch {
	case err == io.EOF && s.filtered != "":
		return s.failBilled(KindContentFilter, "the answer was blocked (stopReason "+s.filtered+")", nil)
	case err == io.EOF && s.stopped:
		return s.stop(io.EOF)
	case err == io.EOF:
		return s.fail(KindStreamBroken, "stream ended without messageStop", nil)
	case errors.As(err, &doc):
		kind, _, msg := classifyBedrockResponse(s.c.resp.StatusCode, s.c.resp.Header, doc.Body)
		if msg == "" {
			return s.fail(KindStreamBroken, "malformed stream: not AWS event stream data", nil)
		}
		return s.fail(kind, msg, nil)
	case errors.Is(err, errEventTruncated), errors.Is(err, errEventMalformed):
		return s.fail(KindStreamBroken, err.Error(), err)
	}
	return s.stop(s.c.readFailure(err, true))
}

// parseBedrockError is the error type and message of a Bedrock error body or exception
// payload: {"message": …} (or "Message"), with the type in "__type" or "code" when the body
// names it ("com.amazon…#ValidationException" is read as ValidationException).
func parseBedrockError(body []byte) (code, msg string) {
	var e struct {
		Type    string `json:"__type"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if decodeUpstream(bytes.TrimSpace(body), &e) != nil {
		return "", ""
	}
	code = e.Type
	if code == "" {
		code = e.Code
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	return code, e.Message
}

// originalStatus is the HTTP status a modelStreamErrorException says the model answered
// with (originalStatusCode), 0 when it says none.
func originalStatus(payload []byte) int {
	var e struct {
		OriginalStatusCode int `json:"originalStatusCode"`
	}
	if decodeUpstream(payload, &e) != nil {
		return 0
	}
	return e.OriginalStatusCode
}

// classifyBedrockResponse classifies a Bedrock error response: the type from
// x-amzn-errortype ("ThrottlingException:http://…" is read as ThrottlingException), else
// from the body; the message from the body.
func classifyBedrockResponse(status int, h http.Header, body []byte) (ErrorKind, string, string) {
	code, msg := parseBedrockError(body)
	if t := h.Get("X-Amzn-Errortype"); t != "" {
		code, _, _ = strings.Cut(t, ":")
	}
	return bedrockErrorKind(code, status, msg, 0), code, msg
}

// bedrockErrorKind is the kind of a Bedrock error of type errType (an HTTP error's
// x-amzn-errortype or a stream's exception type, in either case), HTTP status (0 in a
// stream) and message; original is a modelStreamErrorException's originalStatusCode.
func bedrockErrorKind(errType string, status int, msg string, original int) ErrorKind {
	lmsg := strings.ToLower(msg)
	byMessage := func() (ErrorKind, bool) {
		switch {
		case isContentFilterMessage(msg):
			return KindContentFilter, true
		case isContextLengthMessage(msg) || strings.Contains(lmsg, "input is too long") || strings.Contains(lmsg, "prompt is too long"):
			return KindContextLength, true
		case strings.Contains(lmsg, "model identifier is invalid"):
			return KindModelNotFound, true
		}
		return KindUnknown, false
	}
	// The type decides where Bedrock names one: its throttling message "Too many tokens,
	// please wait" is no context overflow, nor ModelTimeoutException's "took too long".
	switch strings.ToLower(errType) {
	case "throttlingexception", "servicequotaexceededexception", "toomanyrequestsexception":
		return KindRateLimited
	case "serviceunavailableexception", "modelnotreadyexception", "internalserverexception", "internalservererror",
		"internalfailure", "modelerrorexception":
		return KindOverloaded
	case "modeltimeoutexception":
		return KindTimeout
	case "accessdeniedexception", "unrecognizedclientexception", "expiredtokenexception", "invalidsignatureexception",
		"incompletesignatureexception", "missingauthenticationtokenexception", "signaturedoesnotmatch", "invalidclienttokenid":
		return KindAuth
	case "resourcenotfoundexception":
		return KindModelNotFound
	case "validationexception":
		if k, ok := byMessage(); ok {
			return k
		}
		return KindBadRequest
	case "modelstreamerrorexception":
		if original != 0 {
			return classifyStatus(original, "", msg)
		}
		return KindStreamBroken
	}
	if k, ok := byMessage(); ok && status != http.StatusTooManyRequests && status < 500 {
		return k
	}
	if status == 0 {
		return KindStreamBroken // an exception the stream names without a type we know
	}
	return classifyStatus(status, "", msg)
}
