"""Fresh names for the code chadpy writes: one supply, used by every stage."""

from __future__ import annotations

import keyword


class NameSupply:
    """Fresh names, never equal to a name the user's code mentions."""

    def __init__(self, taken: set[str]):
        self.taken = set(taken)
        self.tried: dict[str, int] = {}  # hint -> the suffixes below this are all taken (names are never freed)

    def fresh(self, hint: str) -> str:
        hint = hint + "_" if keyword.iskeyword(hint) else hint  # `lambda`
        k = self.tried.get(hint, 0)
        name = f"{hint}_{k}" if k else hint
        while name in self.taken:
            k += 1
            name = f"{hint}_{k}"
        self.tried[hint] = k + 1
        self.taken.add(name)
        return name
