(function () {
  "use strict";
  const boot = JSON.parse(document.getElementById("toolhost-boot").textContent);
  const root = document.getElementById("app");
  const status = document.getElementById("status");
  const embedded = window.parent !== window;
  let payload = boot.payload;
  // A web page of a signed-in person: tools are called on their session cookie with the page's CSRF token.
  const signedIn = Boolean(boot.csrf_token);
  let nextId = 1;
  const pending = new Map();

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  function say(text, kind) { status.className = kind || "muted"; status.textContent = text || ""; }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && pending.has(message.id)) {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message || "the host refused the call"));
      else waiter.resolve(message.result);
    } else if (message.method === "ui/notifications/tool-result" && message.params && message.params.structuredContent) {
      payload = message.params.structuredContent;
      render();
    }
  });
  function rpc(method, params) {
    return new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    });
  }

  function signInAgain() {
    location.assign("/signin?next=" + encodeURIComponent(location.pathname + location.search));
  }
  async function callTool(name, args) {
    if (signedIn) {
      const response = await fetch("/v1/tools/" + encodeURIComponent(name), {
        method: "POST",
        credentials: "same-origin",
        headers: { "X-CSRF-Token": boot.csrf_token, "Content-Type": "application/json" },
        body: JSON.stringify(args),
      });
      if (response.status === 401) { signInAgain(); throw new Error("your sign-in has ended; signing in again…"); }
      return response.json();
    }
    if (embedded) return rpc("tools/call", { name, arguments: args });
    throw new Error("sign in first");
  }
  function failure(result) {
    if (!result || !result.isError) return null;
    const error = (result.structuredContent && result.structuredContent.error) || result.error || {};
    return (error.error_type ? error.error_type + ": " : "") + (error.message || "the call failed");
  }
  async function reload(args) {
    say("Loading…");
    try {
      const result = await callTool(boot.tool, args);
      const problem = failure(result);
      if (problem) { say(problem, "error"); return; }
      payload = result.structuredContent;
      say("");
      render();
    } catch (error) { say(error.message, "error"); }
  }

  function initialArgs() {
    // Only non-secret view parameters ever come from the address bar.
    const query = new URLSearchParams(location.search);
    const args = {};
    for (const name of ["project_id", "start_date", "platform"]) if (query.get(name)) args[name] = query.get(name);
    if (query.get("days")) args.days = Number(query.get("days"));
    return args;
  }

  function isoDay(date) { return date.toISOString().slice(0, 10); }
  function shiftDay(day, offset) { const date = new Date(day + "T00:00:00Z"); date.setUTCDate(date.getUTCDate() + offset); return isoDay(date); }
  function when(post) { return post.status === "published" && post.published_at ? post.published_at : (post.scheduled_at || post.created_at); }
  function canDistribute() { const scopes = payload.scopes || []; return scopes.includes("mcp:distribute") || scopes.includes("mcp:full"); }

  function renderCalendar() {
    const start = payload.start_date;
    const bar = el("div", { class: "bar" });
    const previous = el("button", { type: "button" }, "◀ Previous week");
    const next = el("button", { type: "button" }, "Next week ▶");
    previous.addEventListener("click", () => reload({ project_id: payload.project_id, start_date: shiftDay(start, -7) }));
    next.addEventListener("click", () => reload({ project_id: payload.project_id, start_date: shiftDay(start, 7) }));
    bar.append(previous, el("strong", {}, "Week of " + start + " (UTC)"), next, el("span", { class: "muted" }, payload.posts.length + " post(s)"));
    const week = el("div", { class: "week" });
    for (let offset = 0; offset < 7; offset++) {
      const day = shiftDay(start, offset);
      const column = el("section", { class: "day" }, el("h2", {}, new Date(day + "T00:00:00Z").toUTCString().slice(0, 11)));
      for (const post of payload.posts.filter((item) => when(item).slice(0, 10) === day)) column.append(renderPost(post));
      week.append(column);
    }
    const children = [bar, week];
    if (canDistribute()) children.push(scheduleForm());
    root.replaceChildren(...children);
  }
  function renderPost(post) {
    const card = el("div", { class: "post " + post.status },
      el("div", {}, el("strong", {}, post.platform), " · " + post.status + " · " + when(post).slice(11, 16) + " UTC"),
      el("div", {}, post.title || "(untitled)"));
    if (post.error) card.append(el("div", { class: "error" }, post.error));
    if ((post.status === "scheduled" || post.status === "pending") && canDistribute()) {
      const input = el("input", { type: "datetime-local", "aria-label": "New time (UTC)", value: (post.scheduled_at || "").slice(0, 16) });
      const move = el("button", { type: "button" }, "Reschedule");
      move.addEventListener("click", async () => {
        if (!input.value) { say("choose a new time", "error"); return; }
        const args = { post_id: post.id, project_id: payload.project_id, scheduled_at: input.value + ":00Z" };
        if (post.scheduled_at) args.expected_scheduled_at = post.scheduled_at;
        const result = await callTool("reschedule_post", args).catch((error) => ({ isError: true, error: { message: error.message } }));
        const problem = failure(result);
        if (problem) { say(problem, "error"); return; }
        say("Rescheduled.", "ok");
        reload({ project_id: payload.project_id, start_date: payload.start_date });
      });
      card.append(input, move);
    }
    return card;
  }
  function scheduleForm() {
    const platform = el("select", { "aria-label": "Platform" }, ...boot.platforms.map((name) => el("option", { value: name }, name)));
    const title = el("input", { type: "text", maxlength: "300", placeholder: "Title (YouTube)" });
    const caption = el("textarea", { rows: "3", maxlength: "10000", placeholder: "Caption" });
    const at = el("input", { type: "datetime-local", "aria-label": "Time (UTC)", required: true });
    const form = el("form", { class: "schedule" }, el("strong", {}, "Schedule a post (UTC)"),
      el("div", { class: "bar" }, platform, title, at), caption, el("button", { type: "submit" }, "Schedule"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const args = { platforms: [platform.value], caption: caption.value, schedule_at: at.value + ":00Z", project_id: payload.project_id };
      if (title.value.trim()) args.title = title.value.trim();
      const result = await callTool("schedule_post", args).catch((error) => ({ isError: true, error: { message: error.message } }));
      const problem = failure(result);
      if (problem) { say(problem, "error"); return; }
      say("Scheduled.", "ok");
      reload({ project_id: payload.project_id, start_date: payload.start_date });
    });
    return form;
  }

  function renderAnalytics() {
    const platform = el("select", { "aria-label": "Platform" }, el("option", { value: "" }, "all platforms"),
      ...boot.platforms.map((name) => el("option", { value: name, selected: payload.platform === name }, name)));
    const days = el("input", { type: "number", min: "1", max: "365", value: String(payload.days), "aria-label": "Days" });
    const apply = el("button", { type: "button" }, "Show");
    apply.addEventListener("click", () => {
      const args = { project_id: payload.project_id, days: Number(days.value) };
      if (platform.value) args.platform = platform.value;
      reload(args);
    });
    const summary = payload.summary;
    const tiles = el("div", { class: "tiles" },
      el("div", { class: "tile" }, el("b", {}, summary.views.toLocaleString()), "views"),
      el("div", { class: "tile" }, el("b", {}, summary.engagement.toLocaleString()), "engagements"),
      el("div", { class: "tile" }, el("b", {}, summary.engagement_rate.toFixed(2) + " %"), "engagement rate"),
      el("div", { class: "tile" }, el("b", {}, String(summary.posts)), "published posts"));
    const children = [el("div", { class: "bar" }, platform, days, el("span", {}, "days"), apply), tiles];
    if (!summary.posts) children.push(el("p", { class: "muted" }, "No published posts in this window yet."));
    const top = Math.max(1, ...payload.platform_totals.map((item) => item.views));
    if (payload.platform_totals.length) {
      children.push(el("table", {}, el("tr", {}, el("th", {}, "Platform"), el("th", {}, "Views"), el("th", {}, ""), el("th", {}, "Engagement"), el("th", {}, "Posts")),
        ...payload.platform_totals.map((item) => el("tr", {}, el("td", {}, item.platform), el("td", {}, item.views.toLocaleString()),
          el("td", { style: "width:40%" }, el("div", { class: "meter", style: "width:" + Math.round(item.views / top * 100) + "%" })),
          el("td", {}, item.engagement.toLocaleString()), el("td", {}, String(item.posts))))));
    }
    if (payload.posts.length) {
      children.push(el("h2", {}, "Posts by views"), el("table", {},
        el("tr", {}, ...["Platform", "Title", "Views", "Likes", "Comments", "Shares", "Rate", "Measured"].map((name) => el("th", {}, name))),
        ...payload.posts.map((post) => el("tr", {}, el("td", {}, post.platform), el("td", {}, post.title || "(untitled)"),
          el("td", {}, post.views.toLocaleString()), el("td", {}, String(post.likes)), el("td", {}, String(post.comments)),
          el("td", {}, String(post.shares)), el("td", {}, post.engagement_rate.toFixed(2) + " %"),
          el("td", { class: "muted" }, post.captured_at ? post.captured_at.slice(0, 16).replace("T", " ") : "no snapshot yet")))));
    }
    root.replaceChildren(...children);
  }

  function render() { if (boot.view === "calendar") renderCalendar(); else renderAnalytics(); }

  if (payload) render();
  else if (signedIn) reload(initialArgs());
  else if (embedded) say("Waiting for the host…");
  else signInAgain();
  if (embedded) {
    rpc("ui/initialize", { protocolVersion: "2025-06-18", appInfo: { name: "toolhost " + boot.view, version: "1" }, appCapabilities: {} })
      .then(() => window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*"))
      .catch(() => {});
  }
})();
