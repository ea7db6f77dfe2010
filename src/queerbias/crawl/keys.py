"""The crawl key: keyed pseudonyms for people and posts, and sealed re-identification data.

A salt stored next to the posts protects nothing: whoever has the folder has the salt.
The key therefore lives outside every output folder, by default in the user's config
folder (`$QUEERBIAS_CRAWL_KEY_FILE` overrides it), readable by its owner only, and is
created on first use. From it come

- pseudonyms: HMAC-SHA256 of an account handle or a post's uri, one domain per kind, so
  the same person gets the same pseudonym across runs and instances, and nobody without
  the key can test a guessed handle against the corpus;
- sealing: AES-GCM encryption of the little data that refresh and takedown need (a post's
  uri and its author), bound to the post's pseudonym so a sealed blob cannot be moved to
  another post;
- a fingerprint that outputs record instead of the key, so that a refresh or takedown
  with a different key is refused instead of silently matching nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from queerbias.crawl.canonical import canonical_handle, canonical_url
from queerbias.errors import QueerbiasError

KEY_ENV = "QUEERBIAS_CRAWL_KEY_FILE"
PSEUDONYM_HEX = 24  # 96 bits: no collisions in any corpus we could build
_NONCE = 12


def default_key_file() -> Path:
    """`$QUEERBIAS_CRAWL_KEY_FILE`, else `crawl.key` in the user's config folder (XDG)."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV]).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "queerbias" / "crawl.key"


class CrawlKey:
    """A 256-bit secret read from (or created in) `path`, which must lie outside `outputs`."""

    def __init__(self, path: Path, outputs: tuple[Path, ...] = ()):
        self.path = Path(path).expanduser()
        resolved = self.path.resolve()
        for folder in outputs:
            if resolved.is_relative_to(Path(folder).resolve()):
                raise QueerbiasError(f"the crawl key {self.path} lies inside the output folder {folder}; "
                                     "keep it elsewhere (--key-file), or whoever has the data has the key")
        if not self.path.exists():
            self._create()
        self._secret = self._read()
        self._account = self._derive(b"account pseudonym")
        self._post = self._derive(b"post pseudonym")
        self._aead = AESGCM(self._derive(b"re-identification seal"))
        self.fingerprint = self._derive(b"fingerprint").hex()[:16]

    @classmethod
    def existing(cls, path: Path, outputs: tuple[Path, ...] = ()) -> CrawlKey:
        """The key at `path`, refused if it is not there: reading old outputs needs the key they were
        made with, and a fresh one would match nothing."""
        if not Path(path).expanduser().exists():
            raise QueerbiasError(f"no crawl key at {path}: pass the key the crawl was made with (--key-file)")
        return cls(path, outputs)

    def _create(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process created it first: use theirs
            return
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(32) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def _read(self) -> bytes:
        try:
            info = self.path.stat()
        except OSError as err:
            raise QueerbiasError(f"cannot read the crawl key {self.path}: {err.strerror}") from None
        if not stat.S_ISREG(info.st_mode):
            raise QueerbiasError(f"the crawl key {self.path} is not a regular file")
        if info.st_mode & 0o077:
            raise QueerbiasError(f"the crawl key {self.path} is readable by others "
                                 f"(mode {stat.S_IMODE(info.st_mode):o}); run: chmod 600 {self.path}")
        text = self.path.read_text(encoding="ascii", errors="replace").strip()
        try:
            secret = bytes.fromhex(text)
        except ValueError:
            secret = b""
        if len(secret) != 32:
            raise QueerbiasError(f"the crawl key {self.path} is not 64 hex digits; "
                                 "restore it from your backup (a new key cannot match old pseudonyms)")
        return secret

    def _derive(self, purpose: bytes) -> bytes:
        return hmac.new(self._secret, purpose, hashlib.sha256).digest()

    def account_pseudonym(self, handle: str) -> str:
        """Keyed pseudonym of an account `user@domain`, in any spelling (`canonical.canonical_handle`)."""
        return hmac.new(self._account, canonical_handle(handle).encode(), hashlib.sha256).hexdigest()[:PSEUDONYM_HEX]

    def post_pseudonym(self, address: str) -> str:
        """Keyed pseudonym of a post's ActivityPub uri (its global id), or of another address of it (its web
        address), in any spelling (`canonical.canonical_url`; a uri as Mastodon writes it is its own canonical
        form, so the pseudonyms of stores written before stay what they were)."""
        return hmac.new(self._post, canonical_url(address).encode(), hashlib.sha256).hexdigest()[:PSEUDONYM_HEX]

    def seal(self, post: str, data: dict) -> str:
        """`data` encrypted and authenticated for the post pseudonym `post`."""
        nonce = secrets.token_bytes(_NONCE)
        sealed = self._aead.encrypt(nonce, json.dumps(data, sort_keys=True).encode(), post.encode())
        return base64.b64encode(nonce + sealed).decode("ascii")

    def unseal(self, post: str, blob: str) -> dict:
        """The data sealed for `post`; QueerbiasError if it was sealed with another key or altered."""
        try:
            raw = base64.b64decode(blob, validate=True)
            return json.loads(self._aead.decrypt(raw[:_NONCE], raw[_NONCE:], post.encode()))
        except (InvalidTag, ValueError, TypeError):
            raise QueerbiasError("re-identification data does not open with this key "
                                 f"(fingerprint {self.fingerprint}); use the key the crawl was made with") from None

    def require_fingerprint(self, recorded: str | None, where: Path) -> None:
        """Refuse to touch outputs written with another key."""
        if recorded and recorded != self.fingerprint:
            raise QueerbiasError(f"{where} was written with the crawl key {recorded}, but {self.path} is key "
                                 f"{self.fingerprint}; pass the original key with --key-file")
