"""Reading model output: structured answers and tool calls written as text.

The core (journal, memory, workspace, context, the engine's loop) imports these modules;
they depend on the LLM port alone and never on an adapter, so a vendor's quirks stay in
:mod:`mindspace.llm.providers`.
"""
