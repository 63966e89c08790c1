package completions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/switchyard-ai/switchyard/providers"
)

// A /v1/responses request with mcp tools is answered in rounds, as OpenAI's remote MCP tools
// are: the servers' tools are listed (an mcp_list_tools item per server, or the one an
// earlier answer of the conversation has), offered to the model as functions, and each
// call of one the model makes is run by the gateway (an mcp_call item) and its result sent
// back to the model in the next round, until the model answers without calling one. A call
// that needs the user's approval ends the response with an mcp_approval_request item; a
// follow-up request (previous_response_id) with an mcp_approval_response item runs or
// declines it and goes on. Calls of the request's own function tools end the response as
// function_call items, for the client to run. Every round is an ordinary gateway request
// (budgets, fallbacks, guardrails, usage records); the response's usage adds them up.

// maxMCPRounds bounds the model calls of one response with mcp tools.
const maxMCPRounds = 20

// mcpDeclined is the error of an mcp_call the user declined (an mcp_approval_response with
// approve false), which is what the model is told.
const mcpDeclined = "the user declined this tool call"

// MCPResponseOptions are the hooks of RespondWithMCP and StreamWithMCP.
type MCPResponseOptions struct {
	// Prepare, when set, adjusts each round's gateway request before it is sent (the
	// server's request headers).
	Prepare func(*Request) error
	// BeforeDone (StreamWithMCP) is called with the whole response before its final event,
	// as ResponsesStreamOptions.BeforeDone.
	BeforeDone func(o *ResponseObject)
}

// mcpRef is the server and tool a name offered to the model stands for.
type mcpRef struct {
	server *mcpServerTool
	tool   MCPTool
}

// mcpRun is the state of one response with mcp tools.
type mcpRun struct {
	g     *Gateway
	scope Scope
	r     *ResponsesRequest
	o     *ResponseObject
	opts  MCPResponseOptions
	mcp   MCPTools

	servers []mcpServerTool
	byName  map[string]mcpRef
	creq    *OpenAIChatRequest
	// approved are the input's approval responses, each with the request it answers.
	approved [][2]ResponsesItem
	calls    int // MCP tool calls made
	usage    Usage
	est      bool
	tries    []Attempt
	w        *responsesWriter // the stream's events; nil when not streaming
}

// mcpItemID is a fresh output item id with prefix (mcpl_, mcp_, mcpr_).
func mcpItemID(prefix string) string { return prefix + strings.ReplaceAll(uuid.NewString(), "-", "") }

// RespondWithMCP answers the Responses request r (UsesMCP; ContinueResponse and
// ResolveItemReferences done) for scope, filling o (NewResponseObject): the rounds of the
// model and the MCP servers' tools, their items in order. A request whose mcp tool names a
// server the gateway does not configure, or one scope may not use, fails before any call
// with the same *ValidationError (ErrInvalid) on server_label, so that the message tells no
// server name scope may not use; the latter's also matches ErrMCPServerNotAllowed.
func (g *Gateway) RespondWithMCP(ctx context.Context, scope Scope, r *ResponsesRequest, o *ResponseObject, opts MCPResponseOptions) error {
	run, err := g.newMCPRun(scope, r, o, opts)
	if err != nil {
		return err
	}
	return run.loop(ctx)
}

// StreamWithMCP is RespondWithMCP as the Responses API's events on rw: response.created,
// then per listed server the mcp_list_tools item's events
// (response.mcp_list_tools.in_progress, completed or failed), each round's reasoning and
// text as they stream, per tool call of the model its mcp_call item's events
// (response.mcp_call_arguments.delta and done, response.mcp_call.in_progress, completed or
// failed), the items of approval requests and of the request's own function calls, and the
// final event. Errors found before anything is sent are returned as they are; a failure
// after ends the stream with an "error" event and response.failed.
func (g *Gateway) StreamWithMCP(ctx context.Context, scope Scope, r *ResponsesRequest, o *ResponseObject, rw http.ResponseWriter, opts MCPResponseOptions) error {
	run, err := g.newMCPRun(scope, r, o, opts)
	if err != nil {
		return err
	}
	run.w = &responsesWriter{sse: NewSSEWriter(rw), o: o, msg: -1, thought: -1}
	snapshot := *o
	if err := run.w.emit(responsesEvent{Type: "response.created", Response: &snapshot}); err != nil {
		return err
	}
	if err := run.w.emit(responsesEvent{Type: "response.in_progress", Response: &snapshot}); err != nil {
		return err
	}
	if err := run.w.sse.Flush(); err != nil {
		return err
	}
	if err := run.loop(ctx); err != nil {
		msg, code, ocode := err.Error(), "stream_failed", "server_error"
		if errors.Is(err, ErrGuardrailBlocked) {
			code, ocode = "guardrail_violation", "guardrail_violation"
		}
		_ = run.w.emit(responsesErrorEvent(code, msg))
		o.Status, o.Error, o.Store = "failed", &ResponseError{Code: ocode, Message: msg}, false
		failed := *o
		_ = run.w.emit(responsesEvent{Type: "response.failed", Response: &failed})
		_ = run.w.sse.Flush()
		return &StreamStartedError{Err: err}
	}
	if err := run.w.finish(o, opts.BeforeDone); err != nil {
		return &StreamStartedError{Err: err}
	}
	return nil
}

// newMCPRun checks r's mcp tools against the gateway's servers and scope.
func (g *Gateway) newMCPRun(scope Scope, r *ResponsesRequest, o *ResponseObject, opts MCPResponseOptions) (*mcpRun, error) {
	servers, err := mcpTools(r.Tools)
	if err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return nil, invalid("tools", "holds no mcp tool")
	}
	if r.Background != nil && *r.Background {
		return nil, invalid("background", "is not supported with mcp tools on this gateway")
	}
	if g.opts.MCP == nil {
		ve := invalid(servers[0].field+".type", "MCP servers are not configured on this gateway: mcp tools cannot be used")
		ve.Err = ErrMCPNotConfigured
		return nil, ve
	}
	// A server scope may not use is refused as one not configured, and the servers the
	// refusal lists are those scope may use: the answer tells no other server's name.
	known := g.opts.MCP.Servers()
	usable := known
	if scope.MCPServers != nil {
		usable = slices.DeleteFunc(slices.Clone(known), func(n string) bool { return !slices.Contains(scope.MCPServers, n) })
	}
	for _, s := range servers {
		if !slices.Contains(usable, s.label) {
			list := strings.Join(usable, ", ")
			if list == "" {
				list = "none"
			}
			ve := invalid(s.field+".server_label", "names no MCP server this key may use (%s)", list)
			if slices.Contains(known, s.label) {
				ve.Err = &MCPServerNotAllowedError{Server: s.label, Field: s.field} // for Go callers only
			}
			return nil, ve
		}
	}
	if r.MaxToolCalls != nil && *r.MaxToolCalls < 1 {
		return nil, invalid("max_tool_calls", "must be at least 1, got %d", *r.MaxToolCalls)
	}
	run := &mcpRun{g: g, scope: scope, r: r, o: o, opts: opts, mcp: g.opts.MCP, servers: servers, byName: map[string]mcpRef{}}
	if run.approved, err = run.approvals(); err != nil {
		return nil, err
	}
	if run.creq, err = r.ToChatRequest(); err != nil {
		return nil, err
	}
	return run, nil
}

// loop lists the tools, runs the approved calls of r's input, then the rounds.
func (run *mcpRun) loop(ctx context.Context) error {
	if err := run.listTools(ctx); err != nil {
		return err
	}
	if err := run.runApproved(ctx, run.approved); err != nil {
		return err
	}
	// An mcp tool_choice forces a call of the server's tools in the first round of a run
	// (not one going on with approved calls), then leaves the model free to answer.
	var forced *OpenAIToolChoice
	if len(run.approved) == 0 {
		var err error
		if forced, err = forcedMCPChoice(run.r.ToolChoice, run.byName); err != nil {
			return err
		}
	}
	maxCalls := maxMCPRounds * 8
	if run.r.MaxToolCalls != nil {
		maxCalls = *run.r.MaxToolCalls
	}
	for round := 0; ; round++ {
		if forced != nil {
			run.creq.ToolChoice = nil
			if round == 0 {
				run.creq.ToolChoice = forced
			}
		}
		req, err := run.creq.ToRequest()
		if err != nil {
			return err
		}
		if run.opts.Prepare != nil {
			if err := run.opts.Prepare(req); err != nil {
				return err
			}
		}
		resp, err := run.answer(ctx, req)
		if cf := (*ContentFilterError)(nil); errors.As(err, &cf) {
			// As without mcp tools: the response ends incomplete (content_filter), billed
			// what the provider reported, with the items of the rounds before.
			resp, err = filteredResponse(cf), nil
		}
		if err != nil {
			return err
		}
		run.usage = addUsage(run.usage, resp.Usage)
		run.est = run.est || resp.UsageEstimated
		run.tries = append(run.tries, resp.Attempts...)
		var mine, theirs []providers.ToolCall // MCP tools' calls; the request's own
		for _, c := range resp.ToolCalls {
			if _, ok := run.byName[c.Name]; ok {
				mine = append(mine, c)
			} else {
				theirs = append(theirs, c)
			}
		}
		if err := run.roundItems(resp, theirs, len(mine) > 0); err != nil {
			return err
		}
		if len(mine) == 0 {
			run.finish(resp, theirs, "")
			return nil
		}
		if round+1 >= maxMCPRounds || run.calls+len(mine) > maxCalls {
			// The model asks for calls past the bound: they are not made.
			run.finish(resp, theirs, "max_tool_calls")
			return nil
		}
		assistant := OpenAIMessage{Role: "assistant", ToolCalls: make([]OpenAIToolCall, 0, len(mine))}
		if text := resp.Text(); text != "" {
			assistant.Content = textContent(text)
		}
		for k, b := range resp.Reasoning {
			if tb, ok := reasoningFromItem(inputItemOfReasoning(reasoningItem(resp.ResponseMessageID, k, b))); ok {
				assistant.ThinkingBlocks = append(assistant.ThinkingBlocks, tb)
			}
		}
		var results []OpenAIMessage
		pending := false
		for _, c := range mine {
			ref := run.byName[c.Name]
			if ref.server.approval.required(ref.tool) {
				pending = true
				args := c.Arguments
				if err := run.add(ResponseOutputItem{ID: mcpItemID("mcpr_"), Type: "mcp_approval_request", Status: "completed",
					ServerLabel: ref.server.label, Name: ref.tool.Name, Arguments: &args}); err != nil {
					return err
				}
				continue
			}
			item, err := run.call(ctx, ref.server.label, ref.tool.Name, c.Arguments, "")
			if err != nil {
				return err
			}
			assistant.ToolCalls = append(assistant.ToolCalls, OpenAIToolCall{ID: c.ID, Type: "function", Function: OpenAIFunctionCall{Name: c.Name, Arguments: c.Arguments},
				ExtraContent: googleExtra(c.ThoughtSignature)})
			results = append(results, OpenAIMessage{Role: "tool", ToolCallID: c.ID, Content: textContent(mcpOutputText(item))})
		}
		if pending || len(theirs) > 0 {
			// The user approves, or runs the request's own tools, before the model goes on.
			run.finish(resp, theirs, "")
			return nil
		}
		run.creq.Messages = append(run.creq.Messages, assistant)
		run.creq.Messages = append(run.creq.Messages, results...)
	}
}

// inputItemOfReasoning is a reasoning output item as the input item it comes back as.
func inputItemOfReasoning(out ResponseOutputItem) ResponsesItem {
	it, _ := inputItemOf(out)
	return it
}

// approvals are the mcp_approval_response items of r's own input, each with the
// mcp_approval_request it answers (found in the conversation or the input).
func (run *mcpRun) approvals() ([][2]ResponsesItem, error) {
	var out [][2]ResponsesItem
	items := run.r.Input.Items
	for i := run.r.history; i < len(items); i++ {
		it := items[i]
		if it.Type != "mcp_approval_response" {
			continue
		}
		field := fmt.Sprintf("input[%d]", i-run.r.history)
		if it.Approve == nil {
			return nil, invalid(field+".approve", "is required in an mcp_approval_response")
		}
		k := slices.IndexFunc(items, func(q ResponsesItem) bool {
			return q.Type == "mcp_approval_request" && q.ID == it.ApprovalRequestID && it.ApprovalRequestID != ""
		})
		if k < 0 {
			return nil, invalid(field+".approval_request_id", "names no mcp_approval_request of this conversation: %q", it.ApprovalRequestID)
		}
		req := items[k]
		// An approval already acted on is not acted on again: a client that sends the
		// whole conversation back (store: false) sends it with the mcp_call it led to,
		// which is history; sent again after that call, or twice, it is an error.
		if c := slices.IndexFunc(items, func(q ResponsesItem) bool {
			return q.Type == "mcp_call" && q.ApprovalRequestID == it.ApprovalRequestID
		}); c > i {
			continue
		} else if c >= 0 || slices.ContainsFunc(out, func(a [2]ResponsesItem) bool { return a[0].ID == req.ID }) {
			return nil, invalid(field+".approval_request_id", "answers mcp_approval_request %q, which is answered already", it.ApprovalRequestID)
		}
		s := slices.IndexFunc(run.servers, func(s mcpServerTool) bool { return s.label == req.ServerLabel })
		if s < 0 {
			return nil, invalid(field+".approval_request_id", "asks for a tool of MCP server %q, which no mcp tool of the request names", req.ServerLabel)
		}
		if a := run.servers[s].allowed; a.set && !a.readOnly && !slices.Contains(a.names, req.Name) {
			return nil, invalid(field+".approval_request_id", "asks for tool %q of MCP server %q, which %s.allowed_tools does not allow", req.Name, req.ServerLabel, run.servers[s].field)
		}
		out = append(out, [2]ResponsesItem{req, it})
	}
	return out, nil
}

// listTools lists every server's tools (or takes the list of an earlier answer in the
// input) and offers the allowed ones to the model.
func (run *mcpRun) listTools(ctx context.Context) error {
	taken := userToolNames(run.r.Tools)
	for i := range run.servers {
		s := &run.servers[i]
		var tools []MCPTool
		k := len(run.r.Input.Items) - 1 // the latest list of the server in the conversation
		for ; k >= 0; k-- {
			if it := run.r.Input.Items[k]; it.Type == "mcp_list_tools" && it.ServerLabel == s.label && it.Error == nil {
				break
			}
		}
		if k >= 0 {
			tools = run.r.Input.Items[k].Tools
		} else {
			var err error
			if tools, err = run.list(ctx, s.label); err != nil {
				return err
			}
		}
		for _, t := range tools {
			if s.allowed.set && !s.allowed.matches(t) {
				continue
			}
			name := mcpModelName(s.label, t.Name, taken)
			taken[name]++ // another server's tool of the same "<server>__<tool>" gets a name of its own
			run.byName[name] = mcpRef{server: s, tool: t}
			params := t.InputSchema
			if len(params) == 0 || string(params) == "null" {
				params = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			run.creq.Tools = append(run.creq.Tools, OpenAITool{Type: "function", Function: OpenAIFunction{Name: name, Description: t.Description, Parameters: params}})
		}
	}
	return nil
}

// list calls ListTools for server: its mcp_list_tools item (with the error when the server
// could not list them: its tools are then not offered).
func (run *mcpRun) list(ctx context.Context, server string) ([]MCPTool, error) {
	item := ResponseOutputItem{ID: mcpItemID("mcpl_"), Type: "mcp_list_tools", Status: "completed", ServerLabel: server, Tools: []MCPTool{}}
	idx, err := run.open(item, "response.mcp_list_tools.in_progress")
	if err != nil {
		return nil, err
	}
	tools, lerr := run.mcp.ListTools(ctx, server)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	ev := "response.mcp_list_tools.completed"
	if lerr != nil {
		run.g.log.Warn("responses: list the tools of an MCP server", "server", server, "err", lerr)
		msg := fmt.Sprintf("listing the tools of MCP server %q failed: %v", server, lerr)
		item.Error, item.Status, ev, tools = &msg, "failed", "response.mcp_list_tools.failed", nil
	} else if tools != nil {
		item.Tools = tools
	}
	return tools, run.close(idx, item, ev)
}

// runApproved runs (or declines) the calls the input's approval responses answer, and
// gives them and their results to the model.
func (run *mcpRun) runApproved(ctx context.Context, approvals [][2]ResponsesItem) error {
	if len(approvals) == 0 {
		return nil
	}
	var calls []OpenAIToolCall
	var results []OpenAIMessage
	taken := userToolNames(run.r.Tools)
	for _, a := range approvals {
		req, resp := a[0], a[1]
		var item ResponseOutputItem
		var err error
		name, offered := run.offeredName(req.ServerLabel, req.Name)
		if !offered {
			name = mcpModelName(req.ServerLabel, req.Name, taken)
		}
		if *resp.Approve && offered {
			item, err = run.call(ctx, req.ServerLabel, req.Name, req.Arguments, req.ID)
		} else {
			// Declined, or a tool the request's mcp tool does not offer (allowed_tools'
			// read_only, or one the server no longer lists): not run.
			msg := mcpDeclined
			if *resp.Approve {
				msg = fmt.Sprintf("tool %q of MCP server %q is not among the tools this request allows", req.Name, req.ServerLabel)
			}
			args := req.Arguments
			item = ResponseOutputItem{ID: mcpItemID("mcp_"), Type: "mcp_call", Status: "failed", ServerLabel: req.ServerLabel, Name: req.Name,
				Arguments: &args, Error: &msg, ApprovalRequestID: req.ID}
			err = run.add(item)
		}
		if err != nil {
			return err
		}
		calls = append(calls, OpenAIToolCall{ID: item.ID, Type: "function", Function: OpenAIFunctionCall{Name: name, Arguments: req.Arguments}})
		results = append(results, OpenAIMessage{Role: "tool", ToolCallID: item.ID, Content: textContent(mcpOutputText(item))})
	}
	m := run.creq.Messages
	if n := len(m); n > 0 && m[n-1].Role == "assistant" {
		m[n-1].ToolCalls = append(m[n-1].ToolCalls, calls...)
	} else {
		m = append(m, OpenAIMessage{Role: "assistant", ToolCalls: calls})
	}
	run.creq.Messages = append(m, results...)
	return nil
}

// offeredName is the name the model is offered tool of server under, if it is offered.
func (run *mcpRun) offeredName(server, tool string) (string, bool) {
	for name, ref := range run.byName {
		if ref.server.label == server && ref.tool.Name == tool {
			return name, true
		}
	}
	return "", false
}

// call runs tool of server with arguments and adds its mcp_call item (approvalID: the
// approval request it answers, if any). A call that fails is an item with its error, which
// the model is told; only a cancelled ctx stops the response.
func (run *mcpRun) call(ctx context.Context, server, tool, arguments, approvalID string) (ResponseOutputItem, error) {
	run.calls++
	empty := ""
	item := ResponseOutputItem{ID: mcpItemID("mcp_"), Type: "mcp_call", Status: "in_progress", ServerLabel: server, Name: tool,
		Arguments: &empty, ApprovalRequestID: approvalID}
	idx, err := run.open(item)
	if err != nil {
		return item, err
	}
	if run.w != nil {
		args := arguments
		if err := run.w.emit(responsesEvent{Type: "response.mcp_call_arguments.delta", ItemID: item.ID, OutputIndex: idxp(idx), Delta: &args}); err != nil {
			return item, err
		}
		if err := run.w.emit(responsesEvent{Type: "response.mcp_call_arguments.done", ItemID: item.ID, OutputIndex: idxp(idx), Arguments: &args}); err != nil {
			return item, err
		}
		if err := run.w.emit(responsesEvent{Type: "response.mcp_call.in_progress", ItemID: item.ID, OutputIndex: idxp(idx)}); err != nil {
			return item, err
		}
		if err := run.w.sse.Flush(); err != nil {
			return item, err
		}
	}
	item.Arguments = &arguments
	raw := json.RawMessage(arguments)
	if strings.TrimSpace(arguments) == "" {
		raw = json.RawMessage(`{}`)
	}
	var res MCPResult
	if !json.Valid(raw) {
		err = fmt.Errorf("the arguments are not JSON: %q", arguments)
	} else {
		res, err = run.mcp.CallTool(ctx, server, tool, raw)
	}
	if ctx.Err() != nil {
		return item, ctx.Err()
	}
	ev := "response.mcp_call.completed"
	switch {
	case err != nil:
		msg := err.Error()
		item.Error, item.Status, ev = &msg, "failed", "response.mcp_call.failed"
	case res.IsError:
		msg := res.Text
		item.Error, item.Status, ev = &msg, "failed", "response.mcp_call.failed"
	default:
		out := res.Text
		item.Output, item.Status = &out, "completed"
	}
	return item, run.close(idx, item, ev)
}

// mcpOutputText is what the model is told of an mcp_call item's result.
func mcpOutputText(item ResponseOutputItem) string {
	if item.Error != nil {
		return "Error: " + *item.Error
	}
	if item.Output != nil {
		return *item.Output
	}
	return ""
}

// mcpCallResultText is what the model is told of an mcp_call input item's result.
func mcpCallResultText(it ResponsesItem) string {
	if it.Error != nil && *it.Error != "" {
		return "Error: " + *it.Error
	}
	var s string
	if json.Unmarshal(it.Output, &s) == nil {
		return s
	}
	return string(it.Output)
}

// open adds item to the output as an in-progress item: its output_item.added event and
// then the events named in events (which carry its id and output index).
func (run *mcpRun) open(item ResponseOutputItem, events ...string) (int, error) {
	if run.w == nil {
		run.o.Output = append(run.o.Output, item)
		return len(run.o.Output) - 1, nil
	}
	idx, err := run.w.addItem(item)
	if err != nil {
		return idx, err
	}
	run.w.items[idx].open = false // ended here, not by closeAll
	for _, e := range events {
		if err := run.w.emit(responsesEvent{Type: e, ItemID: item.ID, OutputIndex: idxp(idx)}); err != nil {
			return idx, err
		}
	}
	return idx, run.w.sse.Flush()
}

// close ends the item at idx as item: the event ev (if any) and output_item.done.
func (run *mcpRun) close(idx int, item ResponseOutputItem, ev string) error {
	run.o.Output[idx] = item
	if run.w == nil {
		return nil
	}
	if ev != "" {
		if err := run.w.emit(responsesEvent{Type: ev, ItemID: item.ID, OutputIndex: idxp(idx)}); err != nil {
			return err
		}
	}
	done := item
	if err := run.w.emit(responsesEvent{Type: "response.output_item.done", OutputIndex: idxp(idx), Item: &done}); err != nil {
		return err
	}
	return run.w.sse.Flush()
}

// add adds a whole item (added and done at once).
func (run *mcpRun) add(item ResponseOutputItem) error {
	idx, err := run.open(item)
	if err != nil {
		return err
	}
	return run.close(idx, item, "")
}

// answer makes one round's gateway call: whole, or streamed with its text and reasoning
// sent as they come (tool calls are sent whole once the round ends).
func (run *mcpRun) answer(ctx context.Context, req *Request) (*Response, error) {
	if run.w == nil {
		return run.g.Complete(ctx, run.scope, req)
	}
	req.Stream = true
	st, err := run.g.Stream(ctx, run.scope, req)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	w := run.w
	w.sources = st.searchSources
	for {
		c, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch c.Type {
		case EventReasoning:
			err = w.reasoning(st.ResponseMessageID(), *c.Reasoning)
		case EventToolCall:
			continue
		default:
			if c.Text != "" {
				err = w.text(st.ResponseMessageID(), c.Text, c.Logprobs)
			}
		}
		if err != nil {
			return nil, err
		}
		if err := w.sse.Flush(); err != nil {
			return nil, err
		}
	}
	if err := w.closeAll(); err != nil {
		return nil, err
	}
	resp := st.Response()
	if resp == nil {
		return nil, fmt.Errorf("%w: the stream ended without an answer", ErrStreamFailed)
	}
	return resp, nil
}

// roundItems adds the output items of a round's answer resp: its reasoning and message (a
// stream sent them already) and the calls of the request's own tools (theirs); a round that
// only calls MCP tools has no empty message.
func (run *mcpRun) roundItems(resp *Response, theirs []providers.ToolCall, calledMCP bool) error {
	if run.w == nil {
		scratch := ResponseObject{tools: run.o.tools}
		rc := *resp
		rc.ToolCalls = theirs
		scratch.Complete(&rc)
		for _, it := range scratch.Output {
			if it.Type == "message" && calledMCP && len(it.Content) == 1 && it.Content[0].Text == "" && it.Content[0].Refusal == "" {
				continue
			}
			run.o.Output = append(run.o.Output, it)
		}
		return nil
	}
	if resp.Refusal != "" {
		item := ResponseOutputItem{ID: "msg_" + resp.ResponseMessageID, Type: "message", Status: "completed", Role: "assistant",
			Content: []ResponseOutputPart{{Type: "refusal", Refusal: resp.Refusal, Annotations: []any{}}}}
		if err := run.add(item); err != nil {
			return err
		}
	}
	for k, c := range theirs {
		if c.ThoughtSignature != "" { // before the call, as Complete has it
			if err := run.w.signatureItem(resp.ResponseMessageID, k, c.ID, c.ThoughtSignature); err != nil {
				return err
			}
		}
		item := run.o.tools.callItem(callItemID(resp.ResponseMessageID, k), c.ID, c.Name, "", "in_progress")
		idx, err := run.w.addItem(item)
		if err != nil {
			return err
		}
		st := &run.w.items[idx]
		st.buf = append(st.buf, c.Arguments...)
		if item.Type == "function_call" {
			args := c.Arguments
			if err := run.w.emit(responsesEvent{Type: "response.function_call_arguments.delta", ItemID: item.ID, OutputIndex: idxp(idx), Delta: &args}); err != nil {
				return err
			}
		}
		if err := run.w.closeItem(idx); err != nil {
			return err
		}
	}
	return run.w.sse.Flush()
}

// finish completes o from the last round's answer: its model and status, the usage and
// attempts of every round; reason, when set, makes it incomplete.
func (run *mcpRun) finish(last *Response, theirs []providers.ToolCall, reason string) {
	output := run.o.Output
	final := *last
	final.ToolCalls = theirs
	final.Usage, final.UsageEstimated, final.Attempts = run.usage, run.est, run.tries
	run.o.Output = nil
	run.o.Complete(&final)
	run.o.Output = output
	if reason != "" {
		run.o.Status, run.o.IncompleteDetails = "incomplete", &IncompleteDetails{Reason: reason}
	}
}
