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
      const column = el("section", { class: "day", "data-day": day }, el("h2", {}, new Date(day + "T00:00:00Z").toUTCString().slice(0, 11)));
      for (const post of payload.posts.filter((item) => when(item).slice(0, 10) === day)) column.append(renderPost(post));
      if (canDistribute()) acceptDrops(column, day);
      week.append(column);
    }
    const children = [bar, week];
    if (canDistribute()) children.push(el("p", { class: "muted" }, "Drag a scheduled post to another day to move it there, same time of day."), scheduleForm());
    root.replaceChildren(...children);
  }
  function movable(post) { return (post.status === "scheduled" || post.status === "pending") && canDistribute(); }
  function acceptDrops(column, day) {
    column.addEventListener("dragover", (event) => {
      if (!event.dataTransfer.types.includes("application/x-toolhost-post")) return;
      event.preventDefault();
      column.classList.add("target");
    });
    column.addEventListener("dragleave", () => column.classList.remove("target"));
    column.addEventListener("drop", (event) => {
      event.preventDefault();
      column.classList.remove("target");
      const post = payload.posts.find((item) => item.id === event.dataTransfer.getData("application/x-toolhost-post"));
      if (!post || !post.scheduled_at || post.scheduled_at.slice(0, 10) === day) return;
      reschedule(post, day + post.scheduled_at.slice(10, 16) + ":00Z");
    });
  }
  async function reschedule(post, scheduledAt) {
    const args = { post_id: post.id, project_id: payload.project_id, scheduled_at: scheduledAt };
    if (post.scheduled_at) args.expected_scheduled_at = post.scheduled_at;
    const result = await callTool("reschedule_post", args).catch((error) => ({ isError: true, error: { message: error.message } }));
    const problem = failure(result);
    // After a conflict too: the card then shows where the post really is.
    await reload({ project_id: payload.project_id, start_date: payload.start_date });
    if (problem) say(problem, "error");
    else say("Moved to " + scheduledAt.slice(0, 16).replace("T", " ") + " UTC.", "ok");
  }
  function renderPost(post) {
    const name = post.first_line || post.title || "";
    const card = el("article", { class: "post " + post.status, "data-post-id": post.id, title: name },
      el("div", { class: "meta" }, el("strong", {}, post.platform), " · " + post.status + " · " + when(post).slice(11, 16) + " UTC"),
      el("div", { class: "line" }, name || el("span", { class: "muted" }, post.platform + " post, no caption")));
    if (post.error) card.append(el("div", { class: "error" }, post.error));
    if (movable(post)) {
      card.setAttribute("draggable", "true");
      card.addEventListener("dragstart", (event) => {
        event.dataTransfer.setData("application/x-toolhost-post", post.id);
        event.dataTransfer.effectAllowed = "move";
      });
      // A date and a time field, one above the other: one datetime field does not fit a day column.
      const day = el("input", { type: "date", "aria-label": "New day (UTC)", value: (post.scheduled_at || "").slice(0, 10) });
      const time = el("input", { type: "time", "aria-label": "New time (UTC)", value: (post.scheduled_at || "").slice(11, 16) });
      const move = el("button", { type: "button" }, "Reschedule");
      move.addEventListener("click", () => {
        if (!day.value || !time.value) { say("choose a new day and time", "error"); return; }
        reschedule(post, day.value + "T" + time.value + ":00Z");
      });
      card.append(el("details", {}, el("summary", {}, "Change time"), day, time, move));
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

  // The HTML parser puts <svg> in the SVG namespace by itself, so the document names no URL at all.
  const SVG_NAMESPACE = (() => { const holder = document.createElement("div"); holder.innerHTML = "<svg></svg>"; return holder.firstChild.namespaceURI; })();
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NAMESPACE, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    return node;
  }
  // Views by the day posts were published: the series the pulse is about, drawn as inline SVG (no library).
  function viewsChart(posts) {
    const byDay = new Map();
    for (const post of posts) {
      if (!post.published_at) continue;
      const day = post.published_at.slice(0, 10);
      byDay.set(day, (byDay.get(day) || 0) + post.views);
    }
    const days = [...byDay.keys()].sort();
    if (!days.length) return null;
    const width = 640, height = 180, left = 48, bottom = 24, top = 12;
    const peak = Math.max(1, ...byDay.values());
    const step = (width - left - 8) / days.length;
    const bars = days.map((day, index) => {
      const value = byDay.get(day);
      const barHeight = Math.round((height - top - bottom) * value / peak);
      const x = left + index * step + step * 0.15;
      return svg("g", {},
        svg("rect", { x: x.toFixed(1), y: height - bottom - barHeight, width: (step * 0.7).toFixed(1), height: barHeight, class: "bar-fill" },
          svg("title", {}, day + ": " + value.toLocaleString() + " views")),
        svg("text", { x: (x + step * 0.35).toFixed(1), y: height - 6, "text-anchor": "middle", class: "axis" }, day.slice(5)));
    });
    return svg("svg", { viewBox: "0 0 " + width + " " + height, class: "chart", role: "img", "aria-label": "Views by day published" },
      svg("line", { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: "rule" }),
      svg("text", { x: left - 6, y: top + 8, "text-anchor": "end", class: "axis" }, peak.toLocaleString()),
      svg("text", { x: left - 6, y: height - bottom, "text-anchor": "end", class: "axis" }, "0"),
      ...bars);
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
    const chart = viewsChart(payload.posts);
    if (chart) children.push(el("h2", {}, "Views by day published"), chart);
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
        ...payload.posts.map((post) => el("tr", {}, el("td", {}, post.platform), el("td", {}, post.title || post.platform + " post"),
          el("td", {}, post.views.toLocaleString()), el("td", {}, String(post.likes)), el("td", {}, String(post.comments)),
          el("td", {}, String(post.shares)), el("td", {}, post.engagement_rate.toFixed(2) + " %"),
          el("td", { class: "muted" }, post.captured_at ? post.captured_at.slice(0, 16).replace("T", " ") : "no snapshot yet")))));
    }
    root.replaceChildren(...children);
  }


  // The approvals queue: pending items of every plan, decided with respond_plan_approval (the agents' tool).
  const POLL_MILLISECONDS = 5000;
  const queue = { groups: [], selected: null, open: null, scores: new Map(), busy: false };
  function queueItems() { return queue.groups.flatMap((group) => group.items); }
  function post(item) { return item.original_post || {}; }
  async function loadQueue() {
    if (queue.busy || queue.open) return;
    queue.busy = true;
    try {
      const response = await fetch("/app/approvals/plans", { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (response.status === 401) { signInAgain(); return; }
      const plans = (await response.json()).plans;
      const groups = [];
      for (const plan of plans) {
        const result = await callTool("list_plan_approvals", { plan_id: plan.plan_id, status: "pending" });
        const problem = failure(result);
        if (problem) { say(problem, "error"); continue; }
        const items = result.structuredContent.items;
        if (items.length) groups.push({ plan, items });
      }
      if (queue.open) return;
      queue.groups = groups;
      const ids = queueItems().map((item) => item.id);
      if (!ids.includes(queue.selected)) queue.selected = ids[0] || null;
      renderApprovals();
      await scoreQueue();
    } catch (error) { say(error.message, "error"); }
    finally { queue.busy = false; }
  }
  async function scoreQueue() {
    for (const item of queueItems()) {
      const given = post(item);
      if (queue.scores.has(item.id) || !given.caption || !given.platform) continue;
      const args = { caption: given.caption, platforms: [given.platform], project_id: item.project_id, response_format: "json" };
      if (given.title) args.title = given.title;
      const result = await callTool("quality_check", args).catch(() => null);
      if (!result || failure(result)) continue;
      const checked = result.structuredContent;
      const brand = (checked.categories || []).find((category) => category.name === "Brand Alignment");
      queue.scores.set(item.id, { total: checked.total, max: checked.maxTotal, passed: checked.passed, brand: brand ? brand.score : null, brandMax: brand ? brand.maxScore : null });
      const slot = root.querySelector('[data-scores-of="' + item.id + '"]');
      if (slot) slot.replaceChildren(...scoreBadges(item));
    }
  }
  function scoreBadges(item) {
    const score = queue.scores.get(item.id);
    if (!score) return [el("span", { class: "muted" }, "scoring…")];
    return [el("span", { class: "badge " + (score.passed ? "pass" : "fail") }, "Quality " + score.total + "/" + score.max),
      score.brand === null ? null : el("span", { class: "badge" }, "Brand " + score.brand + "/" + score.brandMax)];
  }
  function renderApprovals() {
    const items = queueItems();
    const children = [el("p", { class: "muted keys" }, "Keys: j / k move · a approve · r reject · e edit · Esc cancel. New items appear on their own.")];
    if (!items.length) children.push(el("p", { class: "empty" }, "Nothing waits for approval."));
    for (const group of queue.groups) {
      children.push(el("section", { class: "plan" },
        el("h2", {}, group.plan.topic || "Plan " + group.plan.plan_id, el("span", { class: "muted" }, " · " + group.items.length + " pending")),
        ...group.items.map(renderItem)));
    }
    root.replaceChildren(...children);
  }
  function renderItem(item) {
    const given = post(item);
    const scheduled = given.schedule_at ? String(given.schedule_at).slice(0, 16).replace("T", " ") + " UTC" : "not scheduled yet";
    const card = el("article", { class: "item" + (item.id === queue.selected ? " selected" : ""), "data-approval-id": item.id, tabindex: "-1" },
      el("div", { class: "meta" }, el("strong", {}, given.platform || "no platform"), " · " + scheduled,
        el("span", { class: "scores", "data-scores-of": item.id }, ...scoreBadges(item))),
      given.title ? el("div", { class: "title" }, given.title) : null,
      el("p", { class: "caption" }, given.caption || ""),
      given.media_url ? el("div", { class: "muted" }, "Media: ", el("a", { href: given.media_url, rel: "noopener noreferrer", target: "_blank" }, given.media_url)) : null);
    card.addEventListener("click", () => select(item.id, false));
    if (queue.open && queue.open.id === item.id) card.append(queue.open.kind === "reject" ? rejectForm(item) : editForm(item));
    else {
      const approve = el("button", { type: "button", class: "primary" }, "Approve");
      const reject = el("button", { type: "button" }, "Reject…");
      const edit = el("button", { type: "button" }, "Edit…");
      approve.addEventListener("click", () => decide(item, "approved", {}));
      reject.addEventListener("click", () => openForm(item, "reject"));
      edit.addEventListener("click", () => openForm(item, "edit"));
      card.append(el("div", { class: "bar actions" }, approve, reject, edit));
    }
    return card;
  }
  function rejectForm(item) {
    const reason = el("input", { type: "text", maxlength: "1000", placeholder: "Why? (the agent reads this)", "aria-label": "Reason", required: true, name: "reason" });
    const form = el("form", { class: "bar decide" }, reason, el("button", { type: "submit" }, "Reject"), cancelButton());
    form.addEventListener("submit", (event) => { event.preventDefault(); decide(item, "rejected", { reason: reason.value.trim() || undefined }); });
    return form;
  }
  function editForm(item) {
    const given = post(item);
    const caption = el("textarea", { rows: "5", maxlength: "10000", "aria-label": "Caption", name: "caption" });
    caption.value = given.caption || "";
    const title = el("input", { type: "text", maxlength: "300", placeholder: "Title", "aria-label": "Title", name: "title", value: given.title || "" });
    const at = el("input", { type: "datetime-local", "aria-label": "Time (UTC)", name: "schedule_at", value: given.schedule_at ? String(given.schedule_at).slice(0, 16) : "" });
    const form = el("form", { class: "decide edit" }, caption, el("div", { class: "bar" }, title, at), el("div", { class: "bar" }, el("button", { type: "submit", class: "primary" }, "Save and approve"), cancelButton()));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const edited = { ...given, caption: caption.value };
      if (title.value.trim()) edited.title = title.value.trim(); else delete edited.title;
      if (at.value) edited.schedule_at = at.value + ":00Z";
      delete edited.quality;
      decide(item, "edited", { edited_post: edited });
    });
    return form;
  }
  function cancelButton() {
    const cancel = el("button", { type: "button" }, "Cancel");
    cancel.addEventListener("click", closeForm);
    return cancel;
  }
  function openForm(item, kind) {
    queue.selected = item.id;
    queue.open = { id: item.id, kind };
    renderApprovals();
    const field = root.querySelector('[data-approval-id="' + item.id + '"] form input, [data-approval-id="' + item.id + '"] form textarea');
    if (field) field.focus();
  }
  function closeForm() { queue.open = null; renderApprovals(); focusSelected(); }
  function select(id, scroll) {
    if (queue.open && queue.open.id !== id) return;
    queue.selected = id;
    for (const card of root.querySelectorAll("[data-approval-id]")) card.classList.toggle("selected", card.dataset.approvalId === id);
    if (scroll) focusSelected();
  }
  function focusSelected() {
    const card = root.querySelector('[data-approval-id="' + queue.selected + '"]');
    if (card) { card.focus({ preventScroll: true }); card.scrollIntoView({ block: "nearest" }); }
  }
  const DONE = { approved: "Approved.", rejected: "Rejected.", edited: "Edited and approved." };
  async function decide(item, decision, extra) {
    const result = await callTool("respond_plan_approval", { approval_id: item.id, decision, ...extra })
      .catch((error) => ({ isError: true, error: { message: error.message } }));
    const problem = failure(result);
    queue.open = null;
    // The next item becomes the selected one, as in a mail client; the reload keeps it if it is still pending.
    const items = queueItems();
    const index = items.findIndex((candidate) => candidate.id === item.id);
    const following = items[index + 1] || items[index - 1];
    if (following) queue.selected = following.id;
    // A conflict (someone decided it first) is shown as it is, and the queue reloads to what is true now.
    say(problem || DONE[decision], problem ? "error" : "ok");
    await waitForQueue();
    await loadQueue();
    focusSelected();
  }
  async function waitForQueue() { while (queue.busy) await new Promise((resolve) => setTimeout(resolve, 50)); }
  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape" && queue.open) { closeForm(); return; }
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return;
    const items = queueItems();
    const index = items.findIndex((item) => item.id === queue.selected);
    const current = items[index];
    if (event.key === "j" || event.key === "k") {
      const next = items[Math.min(items.length - 1, Math.max(0, index + (event.key === "j" ? 1 : -1)))];
      if (next && !queue.open) select(next.id, true);
    } else if (current && !queue.open && event.key === "a") decide(current, "approved", {});
    else if (current && !queue.open && event.key === "r") openForm(current, "reject");
    else if (current && !queue.open && event.key === "e") openForm(current, "edit");
    else return;
    event.preventDefault();
  }
  function startApprovals() {
    document.addEventListener("keydown", onKey);
    loadQueue();
    setInterval(loadQueue, POLL_MILLISECONDS);
  }

  function render() { if (boot.view === "calendar") renderCalendar(); else renderAnalytics(); }

  if (boot.view === "approvals") { if (signedIn) startApprovals(); else signInAgain(); }
  else if (payload) render();
  else if (signedIn) reload(initialArgs());
  else if (embedded) say("Waiting for the host…");
  else signInAgain();
  if (embedded) {
    rpc("ui/initialize", { protocolVersion: "2025-06-18", appInfo: { name: "toolhost " + boot.view, version: "1" }, appCapabilities: {} })
      .then(() => window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*"))
      .catch(() => {});
  }
})();
