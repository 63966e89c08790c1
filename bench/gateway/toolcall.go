package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchyard-ai/switchyard/providers"
)

// The tool-call mode (-answer tool): requests carry one function tool, and the mock answers
// with a call of it. Streamed, the call comes as OpenAI streams it: a first chunk with the
// call's index, id, type and name, then one chunk per piece of the arguments.

// toolSchema is the get_weather parameters.
const toolSchema = `{"type":"object","properties":{"location":{"type":"string","description":"City and country"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"]}`

// toolsJSON is the tools member of a request.
const toolsJSON = `"tools":[{"type":"function","function":{"name":"get_weather","description":"Current weather of a city","parameters":` + toolSchema + `}}]`

// benchTools are the same tools for the library mode.
var benchTools = []providers.Tool{{Name: "get_weather", Description: "Current weather of a city", Parameters: json.RawMessage(toolSchema)}}

// sendTools reports whether requests carry tools.
func sendTools() bool { return *answer == "tool" || *withTools }

// toolArguments are the call's arguments in n fragments of about 5 bytes each, as a model
// streams them a token or two at a time (OpenAI's documented streamed function call has
// pieces like `{"`, `location`, `":"`): the size of the text mode's "tokN " fragments.
func toolArguments(n int) []string {
	full := `{"location":"Paris, France","unit":"celsius","days":3,"detail":true`
	for i := 0; len(full) < 5*n-1; i++ {
		full += fmt.Sprintf(`,"k%d":"v%d"`, i, i)
	}
	full += "}"
	pieces := make([]string, n)
	for i := range pieces {
		pieces[i] = full[i*len(full)/n : (i+1)*len(full)/n]
	}
	return pieces
}

func newToolMock(nfrags int) *mockUpstream {
	m := &mockUpstream{}
	args := toolArguments(nfrags)
	whole, _ := json.Marshal(strings.Join(args, ""))
	m.full = fmt.Appendf(nil, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":%s}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":60,"completion_tokens":%d,"total_tokens":%d}}`,
		whole, nfrags, 60+nfrags)
	m.chunks = append(m.chunks, []byte("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_DdmO9pD3xa9XTPNJ32zg2hcA\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"))
	for _, a := range args {
		q, _ := json.Marshal(a)
		m.chunks = append(m.chunks, fmt.Appendf(nil, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":%s}}]},\"finish_reason\":null}]}\n\n", q))
	}
	m.tail = fmt.Appendf(nil, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":60,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\ndata: [DONE]\n\n", nfrags, 60+nfrags)
	return m
}
