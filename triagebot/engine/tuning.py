"""Fine-tuning the encoder on labelled issues: supervised contrastive learning (SupCon).

Why: with the base all-MiniLM-L6-v2, only a third of an issue's five nearest labelled neighbours
share its symptom; the sentence model knows English, not which DeepSpeed reports are the same
problem. Pulling issues with the same symptom together (and, at a lower weight, the same root
cause) and pushing the others apart teaches it that, from the shared labelled data alone.

How: a plain torch loop (no ``datasets``/``accelerate``), batches of length-sorted issues (little
padding on a 2-core CPU) with a cross-batch memory of recent embeddings supplying positives and
negatives, AdamW with warm-up and linear decay, token embeddings frozen, fixed seed. Embedding =
mean pooling over the attention mask + L2 normalisation, 256 tokens, the text ``signal_text``
selects (the same text the engine embeds). Heavy imports (torch, sentence-transformers) happen
here only: this module is used by ``scripts/train_encoder.py``, never by the service."""
from __future__ import annotations

import logging
import random
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from triagebot.engine.model_files import bundled_model_path

MAX_LEN = 256
SEED = 0
log = logging.getLogger(__name__)


def label_ids(values: list[str], unknown: str = "unknown") -> tuple[np.ndarray, list[str]]:
    """Map string labels to ints; ``unknown`` -> -1 (no positives)."""
    classes = sorted({v for v in values if v != unknown})
    index = {c: i for i, c in enumerate(classes)}
    return np.array([index.get(v, -1) for v in values], dtype=np.int64), classes


def set_seed(seed: int = SEED) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def load_base():  # type: ignore[no-untyped-def]
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(bundled_model_path(), device="cpu")
    st.max_seq_length = MAX_LEN
    return st


def _pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)


@torch.inference_mode()
def embed(st: Any, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Mean-pooled, L2-normalised embeddings; batches sorted by length (same result as st.encode)."""
    model, tok = st[0].auto_model, st.tokenizer
    was_training = model.training
    model.eval()
    enc = tok(list(texts), truncation=True, max_length=MAX_LEN)
    lens = np.array([len(x) for x in enc["input_ids"]])
    order = np.argsort(-lens, kind="stable")
    out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    for i in range(0, len(order), batch_size):
        idx = order[i : i + batch_size]
        b = tok.pad({k: [enc[k][j] for j in idx] for k in enc.keys()}, return_tensors="pt")
        h = model(**b).last_hidden_state
        out[idx] = F.normalize(_pool(h, b["attention_mask"]), dim=-1).numpy()
    model.train(was_training)
    return out


def supcon(anchors: torch.Tensor, cands: torch.Tensor, a_lab: torch.Tensor, c_lab: torch.Tensor,
           tau: float, a_id: torch.Tensor | None = None, c_id: torch.Tensor | None = None) -> torch.Tensor:
    """Supervised contrastive loss (Khosla et al.). anchors (n,d) are cands[:n]; label -1 = none.

    Candidates with the anchor's own issue id (its stale copy in the memory) are excluded.
    Anchors without any positive among the candidates are skipped."""
    n = anchors.shape[0]
    logits = anchors @ cands.T / tau
    self_mask = torch.zeros_like(logits, dtype=torch.bool)
    self_mask[torch.arange(n), torch.arange(n)] = True
    if a_id is not None and c_id is not None:
        self_mask |= a_id[:, None] == c_id[None, :]
    logits = logits.masked_fill(self_mask, float("-inf"))
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    pos = (a_lab[:, None] == c_lab[None, :]) & (a_lab[:, None] >= 0) & ~self_mask
    npos = pos.sum(1)
    keep = npos > 0
    if not keep.any():
        return anchors.sum() * 0.0
    lp = log_prob.masked_fill(~pos, 0.0)
    per = -lp.sum(1)[keep] / npos[keep]
    return per.mean()


def finetune(texts: Sequence[str], sym: Sequence[str], rc: Sequence[str], *, epochs: int = 3,
             lr: float = 4e-5, batch_size: int = 32, tau: float = 0.07, rc_weight: float = 0.3,
             queue_size: int = 512, warmup: float = 0.1, weight_decay: float = 0.01,
             freeze_embeddings: bool = True, seed: int = SEED, tag: str = "") -> Any:
    """Fine-tune MiniLM with SupCon on symptom (+ rc_weight * SupCon on known root cause).

    Batches are built from length-sorted (jittered) issues to avoid padding; since such batches are
    label-random, a cross-batch memory of the last `queue_size` (detached) embeddings supplies the
    positives/negatives (XBM-style). Returns the SentenceTransformer holding the tuned weights."""
    set_seed(seed)
    rng = np.random.RandomState(seed)
    st = load_base()
    model, tok = st[0].auto_model, st.tokenizer
    if freeze_embeddings:
        for p in model.embeddings.parameters():
            p.requires_grad = False
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    enc = tok(list(texts), truncation=True, max_length=MAX_LEN)
    lens = np.array([len(x) for x in enc["input_ids"]])
    n = len(texts)
    steps_per_epoch = (n + batch_size - 1) // batch_size
    total = steps_per_epoch * epochs
    n_warm = max(1, int(warmup * total))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / n_warm, max(0.0, (total - s) / max(1, total - n_warm))))
    sym_t = torch.as_tensor(sym)
    rc_t = torch.as_tensor(rc)
    d = model.config.hidden_size
    q_z = torch.zeros(0, d)
    q_s, q_r, q_i = (torch.zeros(0, dtype=torch.long) for _ in range(3))
    model.train()
    t0 = time.time()
    step = 0
    for ep in range(epochs):
        key = lens + rng.uniform(0, 32, n)  # jitter so batches differ between epochs
        order = np.argsort(key, kind="stable")
        batches = [order[i : i + batch_size] for i in range(0, n, batch_size)]
        rng.shuffle(batches)
        ep_loss = 0.0
        for idx in batches:
            b = tok.pad({k: [enc[k][j] for j in idx] for k in enc.keys()}, return_tensors="pt")
            h = model(**b).last_hidden_state
            z = F.normalize(_pool(h, b["attention_mask"]), dim=-1)
            ti = torch.as_tensor(idx)
            cz = torch.cat([z, q_z])
            cs = torch.cat([sym_t[ti], q_s])
            cr = torch.cat([rc_t[ti], q_r])
            ci = torch.cat([ti, q_i])
            loss = supcon(z, cz, sym_t[ti], cs, tau, ti, ci)
            if rc_weight > 0:
                loss = loss + rc_weight * supcon(z, cz, rc_t[ti], cr, tau, ti, ci)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            step += 1
            ep_loss += loss.item()
            q_z = torch.cat([z.detach(), q_z])[:queue_size]
            q_s = torch.cat([sym_t[ti], q_s])[:queue_size]
            q_r = torch.cat([rc_t[ti], q_r])[:queue_size]
            q_i = torch.cat([ti, q_i])[:queue_size]
        log.info(f"  {tag} epoch {ep + 1}/{epochs} loss {ep_loss / len(batches):.4f} "
            f"({time.time() - t0:.0f}s, {step} steps)")
    model.eval()
    return st
