"""Messages of OpenAI Realtime and Gemini Live as the official SDKs type them.

Plain dicts, so the tests run where the SDKs are not installed (the mitmproxy 11 venv);
test_realtime.py and test_gemini_live.py validate every shape here against the SDKs'
own types (openai.types.realtime, google.genai.types) where they are.
"""

from __future__ import annotations

import json


def dumps(event: dict) -> bytes:
    return json.dumps(event).encode()


# -- OpenAI Realtime: client events ----------------------------------------------------------


def function_tool(name: str) -> dict:
    # openai/types/realtime/realtime_function_tool_param.py
    return {
        "type": "function",
        "name": name,
        "description": f"the {name} tool",
        "parameters": {"type": "object", "properties": {}},
    }


def mcp_tool(label: str) -> dict:
    # realtime_tools_config_union_param.py: Mcp
    return {"type": "mcp", "server_label": label, "server_url": "https://mcp.example/sse"}


def session_update(tools=None, tool_choice=None, event_id="evt_client_1") -> dict:
    # session_update_event_param.py; the session is a RealtimeSessionCreateRequestParam
    session: dict = {"type": "realtime"}
    if tools is not None:
        session["tools"] = tools
    if tool_choice is not None:
        session["tool_choice"] = tool_choice
    return {"type": "session.update", "event_id": event_id, "session": session}


def response_create(tools=None, tool_choice=None, items=None, event_id="evt_client_2") -> dict:
    # response_create_event_param.py; realtime_response_create_params_param.py
    response: dict = {}
    if tools is not None:
        response["tools"] = tools
    if tool_choice is not None:
        response["tool_choice"] = tool_choice
    if items is not None:
        response["input"] = items
    return {"type": "response.create", "event_id": event_id, "response": response}


def function_call_item(name: str, call_id: str = "call_1") -> dict:
    # realtime_conversation_item_function_call_param.py
    return {"type": "function_call", "name": name, "call_id": call_id, "arguments": "{}"}


def item_create(item: dict, event_id="evt_client_3") -> dict:
    # conversation_item_create_event_param.py
    return {"type": "conversation.item.create", "event_id": event_id, "item": item}


def function_call_output(call_id: str = "call_1") -> dict:
    # realtime_conversation_item_function_call_output_param.py: no name
    return item_create({"type": "function_call_output", "call_id": call_id, "output": "{}"})


def audio_append() -> dict:
    # input_audio_buffer_append_event_param.py
    return {"type": "input_audio_buffer.append", "audio": "AAAAAAAA"}


# -- OpenAI Realtime: server events ----------------------------------------------------------


def _server_item(name: str, call_id: str, status: str = "in_progress") -> dict:
    # realtime_conversation_item_function_call.py
    return {
        "id": f"item_{call_id}",
        "object": "realtime.item",
        "type": "function_call",
        "status": status,
        "name": name,
        "call_id": call_id,
        "arguments": "" if status == "in_progress" else "{}",
    }


def output_item(kind: str, name: str, call_id: str = "call_1") -> dict:
    # response_output_item_added_event.py / response_output_item_done_event.py
    status = "in_progress" if kind == "added" else "completed"
    return {
        "type": f"response.output_item.{kind}",
        "event_id": f"event_{kind}_{call_id}",
        "response_id": "resp_1",
        "output_index": 0,
        "item": _server_item(name, call_id, status),
    }


def arguments_done(name: str, call_id: str = "call_1") -> dict:
    # response_function_call_arguments_done_event.py
    return {
        "type": "response.function_call_arguments.done",
        "event_id": f"event_args_{call_id}",
        "response_id": "resp_1",
        "item_id": f"item_{call_id}",
        "output_index": 0,
        "call_id": call_id,
        "name": name,
        "arguments": "{}",
    }


def response_done(calls: list[tuple[str, str]]) -> dict:
    """``calls``: (name, call_id) of each function_call item in the response's output."""
    # response_done_event.py; realtime_response.py
    return {
        "type": "response.done",
        "event_id": "event_done_1",
        "response": {
            "id": "resp_1",
            "object": "realtime.response",
            "status": "completed",
            "output": [_server_item(name, call_id, "completed") for name, call_id in calls],
        },
    }


def session_created(tools: list[dict]) -> dict:
    # session_created_event.py
    return {
        "type": "session.created",
        "event_id": "event_created",
        "session": {"type": "realtime", "object": "realtime.session", "tools": tools},
    }


def error_event(message: str, param: str | None = None) -> dict:
    # realtime_error_event.py
    return {
        "type": "error",
        "event_id": "event_error_1",
        "error": {"type": "invalid_request_error", "message": message, "param": param},
    }


# -- Gemini Live -----------------------------------------------------------------------------


def setup(names: list[str], snake: bool = False, model="models/gemini-live-2.5-flash") -> dict:
    # google/genai/types.py: LiveClientMessage.setup (LiveClientSetup), Tool, FunctionDeclaration
    key = "function_declarations" if snake else "functionDeclarations"
    decls = [{"name": n, "description": f"the {n} tool"} for n in names]
    return {"setup": {"model": model, "tools": [{key: decls}]}}


def tool_call(calls: list[tuple[str, str]]) -> dict:
    """``calls``: (id, name)."""
    # LiveServerMessage.tool_call (LiveServerToolCall), FunctionCall
    return {"toolCall": {"functionCalls": [{"id": i, "name": n, "args": {}} for i, n in calls]}}


def tool_response(responses: list[tuple[str, str]], key: str = "toolResponse") -> dict:
    """``responses``: (id, name). google-genai's send_tool_response sends the key in
    snake_case (``tool_response``) around camelCase fields."""
    # LiveClientMessage.tool_response (LiveClientToolResponse), FunctionResponse
    return {
        key: {
            "functionResponses": [
                {"id": i, "name": n, "response": {"result": "ok"}} for i, n in responses
            ]
        }
    }


def client_content_with_call(name: str) -> dict:
    # LiveClientMessage.client_content (LiveClientContent): turns of Content with Parts
    return {
        "clientContent": {
            "turns": [{"role": "model", "parts": [{"functionCall": {"name": name, "args": {}}}]}],
            "turnComplete": False,
        }
    }


def context_update(names: list[str]) -> dict:
    # LiveClientMessage.context_update (LiveClientContextUpdate, LiveClientContextUpdateTools)
    decls = [{"name": n, "description": f"the {n} tool"} for n in names]
    return {"contextUpdate": {"tools": {"tools": [{"functionDeclarations": decls}]}}}


def setup_complete() -> dict:
    return {"setupComplete": {}}
