"""The 16 built-in hyperframes blocks (CATALOG.md §4): self-contained HTML/CSS/JS with a seek(t) contract.

Each snippet defines `window.hfBlocks["<id>"] = (element, params) => ({ seek(t) { … } })`: the block draws
into `element` as a pure function of time t (seconds), so any frame can be rendered in any order. No block
loads anything from the network.
"""

# ruff: noqa: E501 - the snippets are JavaScript kept one statement per line, as a reader of the snippet sees it

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CATEGORIES = ("transition", "social-overlay", "data-viz", "branding", "decorative")


@dataclass(frozen=True, slots=True)
class Block:
    """One block: what it does, its parameters (name → type/default) and its snippet."""

    id: str
    category: str
    description: str
    params: dict[str, Any]
    body: str

    @property
    def snippet(self) -> str:
        """The block as a script tag that registers it in window.hfBlocks."""
        defaults = ", ".join(f"{name}: {_js(spec['default'])}" for name, spec in self.params.items())
        return (
            "<script>\n(window.hfBlocks = window.hfBlocks || {})["
            + _js(self.id)
            + "] = (element, params) => {\n  const p = Object.assign({"
            + defaults
            + "}, params || {});\n  const clamp = (v) => Math.max(0, Math.min(1, v));\n"
            + self.body.strip()
            + "\n};\n</script>"
        )


def _js(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_js(item) for item in value) + "]"
    return str(value)


# A block parameter as the catalogue lists it: its JSON type and default.
def _param(kind: str, default: Any) -> dict[str, Any]:
    return {"type": kind, "default": default}


BLOCKS: tuple[Block, ...] = (
    Block(
        "flash-through-white",
        "transition",
        "A white flash that peaks at `at` seconds, hiding a cut.",
        {"at": _param("number", 1.0), "duration": _param("number", 0.4)},
        """element.style.cssText += ';position:absolute;inset:0;background:#fff;pointer-events:none;opacity:0';
  return { seek(t) { element.style.opacity = String(1 - clamp(Math.abs(t - p.at) / (p.duration / 2))); } };""",
    ),
    Block(
        "whip-pan",
        "transition",
        "Slides the element in sideways with a motion blur, as a whip pan.",
        {"start": _param("number", 0.0), "duration": _param("number", 0.5), "direction": _param("string", "left")},
        """return { seek(t) {
    const k = clamp((t - p.start) / p.duration), e = 1 - Math.pow(1 - k, 3), s = p.direction === 'left' ? 1 : -1;
    element.style.transform = `translateX(${s * (1 - e) * 100}%)`;
    element.style.filter = `blur(${(1 - e) * 24}px)`;
  } };""",
    ),
    Block(
        "cinematic-zoom",
        "transition",
        "A slow push-in from `from` to `to` scale over the duration.",
        {
            "start": _param("number", 0.0),
            "duration": _param("number", 5.0),
            "from": _param("number", 1.0),
            "to": _param("number", 1.15),
        },
        """return { seek(t) {
    const k = clamp((t - p.start) / p.duration), e = k * k * (3 - 2 * k);
    element.style.transform = `scale(${p.from + (p.to - p.from) * e})`;
  } };""",
    ),
    Block(
        "glitch",
        "transition",
        "RGB-split jitter around `at` seconds, deterministic per frame.",
        {"at": _param("number", 1.0), "duration": _param("number", 0.3), "strength": _param("number", 12)},
        """return { seek(t) {
    const k = 1 - clamp(Math.abs(t - p.at) / (p.duration / 2)), n = Math.sin(t * 913.7) * p.strength * k;
    element.style.transform = `translateX(${n}px)`;
    element.style.textShadow = k > 0 ? `${n}px 0 #f0f, ${-n}px 0 #0ff` : 'none';
  } };""",
    ),
    Block(
        "light-leak",
        "transition",
        "A warm gradient that drifts across the frame.",
        {"start": _param("number", 0.0), "duration": _param("number", 2.0), "color": _param("string", "#ffb36b")},
        """element.style.cssText += ';position:absolute;inset:0;pointer-events:none;mix-blend-mode:screen';
  return { seek(t) {
    const k = clamp((t - p.start) / p.duration);
    element.style.background = `radial-gradient(circle at ${k * 120 - 10}% 40%, ${p.color}cc, transparent 55%)`;
    element.style.opacity = String(Math.sin(k * Math.PI));
  } };""",
    ),
    Block(
        "follow-card",
        "social-overlay",
        "A 'follow' card with a handle that pops in.",
        {"handle": _param("string", "@brand"), "start": _param("number", 0.5)},
        """element.innerHTML = `<div style="display:inline-flex;gap:.5em;align-items:center;padding:.6em 1em;border-radius:1em;background:#fff;color:#111;font:600 40px sans-serif">Follow <span style="color:#1d9bf0">${p.handle}</span></div>`;
  return { seek(t) { const k = clamp((t - p.start) / 0.35); element.style.transform = `scale(${0.6 + 0.4 * k})`; element.style.opacity = String(k); } };""",
    ),
    Block(
        "lower-third",
        "social-overlay",
        "A name and title bar that wipes in from the left.",
        {
            "name": _param("string", "Jane Doe"),
            "title": _param("string", "Founder"),
            "start": _param("number", 0.3),
            "color": _param("string", "#2563eb"),
        },
        """element.innerHTML = `<div style="padding:.5em 1em;background:${p.color};color:#fff;font:700 44px sans-serif">${p.name}<div style="font:400 30px sans-serif">${p.title}</div></div>`;
  return { seek(t) { const k = clamp((t - p.start) / 0.5); element.style.clipPath = `inset(0 ${(1 - k) * 100}% 0 0)`; } };""",
    ),
    Block(
        "post-card",
        "social-overlay",
        "A social post card (author, text) that rises in.",
        {"author": _param("string", "Brand"), "text": _param("string", "Hello world"), "start": _param("number", 0.2)},
        """element.innerHTML = `<div style="max-width:80%;padding:1em;border-radius:.6em;background:#fff;color:#111;font:400 36px sans-serif"><b>${p.author}</b><p>${p.text}</p></div>`;
  return { seek(t) { const k = clamp((t - p.start) / 0.45); element.style.transform = `translateY(${(1 - k) * 60}px)`; element.style.opacity = String(k); } };""",
    ),
    Block(
        "notification-toast",
        "social-overlay",
        "A phone-style notification that slides down, stays, and leaves.",
        {"text": _param("string", "New follower"), "start": _param("number", 0.2), "hold": _param("number", 2.0)},
        """element.innerHTML = `<div style="padding:.6em 1em;border-radius:1em;background:rgba(30,30,30,.9);color:#fff;font:500 34px sans-serif">${p.text}</div>`;
  return { seek(t) {
    const inK = clamp((t - p.start) / 0.3), outK = clamp((t - p.start - p.hold) / 0.3);
    element.style.transform = `translateY(${(outK - inK) * 120}%)`;
  } };""",
    ),
    Block(
        "data-chart",
        "data-viz",
        "Bars that grow to their values, staggered.",
        {"values": _param("number[]", [3, 5, 8]), "color": _param("string", "#2563eb"), "start": _param("number", 0.0)},
        """const max = Math.max(...p.values, 1);
  element.style.cssText += ';display:flex;align-items:flex-end;gap:4%;height:100%';
  const bars = p.values.map(() => { const b = document.createElement('div'); b.style.cssText = `flex:1;background:${p.color};border-radius:8px 8px 0 0`; element.appendChild(b); return b; });
  return { seek(t) { bars.forEach((b, i) => { const k = clamp((t - p.start - i * 0.15) / 0.6); b.style.height = `${k * p.values[i] / max * 100}%`; }); } };""",
    ),
    Block(
        "flowchart",
        "data-viz",
        "Steps joined by arrows, revealed one by one.",
        {
            "steps": _param("string[]", ["Idea", "Draft", "Ship"]),
            "start": _param("number", 0.0),
            "interval": _param("number", 0.6),
        },
        """element.innerHTML = p.steps.map((s, i) => `<span data-i="${i}" style="display:inline-block;margin:.3em;padding:.4em .8em;border:3px solid currentColor;border-radius:.4em;font:600 36px sans-serif">${s}</span>${i < p.steps.length - 1 ? '<span data-a="' + i + '" style="font:600 36px sans-serif">→</span>' : ''}`).join('');
  const parts = [...element.children];
  return { seek(t) { parts.forEach((el) => { const i = Number(el.dataset.i ?? Number(el.dataset.a) + 0.5); el.style.opacity = String(clamp((t - p.start - i * p.interval) / 0.3)); }); } };""",
    ),
    Block(
        "line-graph",
        "data-viz",
        "An SVG line drawn left to right through the values.",
        {
            "values": _param("number[]", [2, 4, 3, 6]),
            "color": _param("string", "#16a34a"),
            "start": _param("number", 0.0),
            "duration": _param("number", 1.5),
        },
        """const max = Math.max(...p.values), min = Math.min(...p.values), span = (max - min) || 1;
  const pts = p.values.map((v, i) => `${(i / Math.max(1, p.values.length - 1)) * 100},${100 - (v - min) / span * 100}`).join(' ');
  element.innerHTML = `<svg viewBox="-2 -2 104 104" preserveAspectRatio="none" style="width:100%;height:100%"><polyline points="${pts}" fill="none" stroke="${p.color}" stroke-width="2" pathLength="1" stroke-dasharray="1" stroke-dashoffset="1"/></svg>`;
  const line = element.querySelector('polyline');
  return { seek(t) { line.setAttribute('stroke-dashoffset', String(1 - clamp((t - p.start) / p.duration))); } };""",
    ),
    Block(
        "logo-outro",
        "branding",
        "The brand name (or an image URL) scaling in over a solid colour.",
        {
            "text": _param("string", "Brand"),
            "image": _param("string", ""),
            "background": _param("string", "#111111"),
            "start": _param("number", 0.0),
        },
        """element.style.cssText += `;position:absolute;inset:0;display:grid;place-items:center;background:${p.background}`;
  element.innerHTML = p.image ? `<img src="${p.image}" style="max-width:50%">` : `<div style="color:#fff;font:800 96px sans-serif">${p.text}</div>`;
  const inner = element.firstElementChild;
  return { seek(t) { const k = clamp((t - p.start) / 0.8), e = 1 - Math.pow(1 - k, 3); inner.style.transform = `scale(${0.7 + 0.3 * e})`; inner.style.opacity = String(e); } };""",
    ),
    Block(
        "app-showcase",
        "branding",
        "A phone frame around the element's content that floats up and tilts.",
        {"start": _param("number", 0.0), "duration": _param("number", 1.2)},
        """element.style.cssText += ';border:18px solid #111;border-radius:48px;overflow:hidden;box-shadow:0 30px 80px rgba(0,0,0,.45)';
  return { seek(t) { const k = clamp((t - p.start) / p.duration), e = k * k * (3 - 2 * k); element.style.transform = `translateY(${(1 - e) * 30}%) rotate(${(1 - e) * -8}deg)`; } };""",
    ),
    Block(
        "grain-overlay",
        "decorative",
        "Film grain whose pattern changes every frame (seeded by t).",
        {"opacity": _param("number", 0.08)},
        """const canvas = document.createElement('canvas'); canvas.width = 256; canvas.height = 256;
  canvas.style.cssText = `position:absolute;inset:0;width:100%;height:100%;opacity:${p.opacity};pointer-events:none;mix-blend-mode:overlay`;
  element.appendChild(canvas); const ctx = canvas.getContext('2d'); const img = ctx.createImageData(256, 256);
  return { seek(t) { let s = Math.floor(t * 1000) + 1; for (let i = 0; i < img.data.length; i += 4) { s = (s * 16807) % 2147483647; const v = s & 255; img.data[i] = img.data[i + 1] = img.data[i + 2] = v; img.data[i + 3] = 255; } ctx.putImageData(img, 0, 0); } };""",
    ),
    Block(
        "shimmer-sweep",
        "decorative",
        "A diagonal highlight sweeping across the element.",
        {"start": _param("number", 0.0), "duration": _param("number", 1.2)},
        """element.style.cssText += ';position:relative;overflow:hidden';
  const band = document.createElement('div'); band.style.cssText = 'position:absolute;inset:-50%;background:linear-gradient(100deg,transparent 40%,rgba(255,255,255,.55) 50%,transparent 60%);pointer-events:none';
  element.appendChild(band);
  return { seek(t) { band.style.transform = `translateX(${(clamp((t - p.start) / p.duration) * 2 - 1) * 100}%)`; } };""",
    ),
)
