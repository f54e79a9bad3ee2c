"""See and edit session memory's facts and patterns (the facts in every prompt).

``GET /session-memory`` (in :mod:`.state`) lists them; these routes add, change and
delete one item, addressed by its list (``facts`` or ``patterns``) and its 0-based
position. Each change passes the checks of the model's ``add_session_memory`` and is
recorded in the history with the caller as a ``user`` actor (``actor``, ``http`` by
default), like every other edit (docs/manage.md).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from mindspace.engine import SessionItemKind
from mindspace.hosts.http.auth import KeyDep
from mindspace.hosts.http.routes.edits import UserDep
from mindspace.hosts.http.schemas import HubDep, StrictBody

__all__ = ["router"]

router = APIRouter(prefix="/v1/assistants/{key}/session-memory", tags=["edits"])

ListName = Annotated[
    Literal["facts", "patterns"], Path(description="Which list: `facts` or `patterns`.")
]
Index = Annotated[int, Path(ge=0, description="The item's position, from 0.")]
_KINDS: dict[str, SessionItemKind] = {"facts": "fact", "patterns": "pattern"}


class SessionItemIn(StrictBody):
    """The item's text, in the third person (the persona guard checks it)."""

    text: str = Field(min_length=1, max_length=100_000)


class SessionItemOut(BaseModel):
    """The item after the change (``before``: its text until then, for an edit or delete)."""

    success: Literal[True] = True
    kind: SessionItemKind
    index: int
    text: str | None = Field(description="The new text; null after a delete.")
    before: str | None = None


@router.post("/{list_name}", summary="Add a session fact or pattern", response_model=SessionItemOut)
async def add_session_item(
    key: KeyDep, list_name: ListName, body: SessionItemIn, hub: HubDep, user: UserDep
) -> SessionItemOut:
    """Append an item; it goes into every prompt from the next tick on."""
    kind = _KINDS[list_name]
    index = await hub.get(key).edits.add_session_item(kind, body.text, user)
    return SessionItemOut(kind=kind, index=index, text=body.text.strip())


@router.patch(
    "/{list_name}/{index}",
    summary="Change a session fact or pattern",
    response_model=SessionItemOut,
)
async def edit_session_item(
    key: KeyDep,
    list_name: ListName,
    index: Index,
    body: SessionItemIn,
    hub: HubDep,
    user: UserDep,
) -> SessionItemOut:
    """Replace the text of the item at ``index``."""
    kind = _KINDS[list_name]
    edits = hub.get(key).edits
    old = await edits.update_session_item(kind, index, body.text, user)
    return SessionItemOut(kind=kind, index=index, text=body.text.strip(), before=old)


@router.delete(
    "/{list_name}/{index}",
    summary="Delete a session fact or pattern",
    response_model=SessionItemOut,
)
async def delete_session_item(
    key: KeyDep, list_name: ListName, index: Index, hub: HubDep, user: UserDep
) -> SessionItemOut:
    """Delete the item at ``index``; the later ones move up by one."""
    kind = _KINDS[list_name]
    old = await hub.get(key).edits.delete_session_item(kind, index, user)
    return SessionItemOut(kind=kind, index=index, text=None, before=old)
