// The question page. Model-written text only ever reaches the DOM as text nodes or attribute
// values, never as HTML: markdown arrives rendered by the server as an element tree, and only
// the tags and attributes listed in DOC_TAGS are built from it.
"use strict";
(() => {
  const RETRIES_BEFORE_UNREACHABLE = 3;
  const SILENCE_MS = 40000; // the server pings every 15 s; this long without a word is a dead link
  const NOTICE_MS = 8000;
  const state = {
    asks: new Map(), // id -> ask in page form, oldest first
    cards: new Map(), // id -> card controller, kept so switching asks keeps what was typed
    currentId: null,
    sent: new Set(), // ids this tab answered or closed
    failures: 0,
    source: null,
    lastWord: 0,
    stale: false,
  };
  const byId = (id) => document.getElementById(id);
  let uid = 0;
  const nextId = (prefix) => `${prefix}-${++uid}`;

  // Control and bidirectional-formatting characters in model text would be hidden or obeyed by
  // the browser (reordering what the human reads): show each as a visible stand-in instead.
  // Input values keep the original text, so an answer names the option exactly.
  const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  function visible(text) {
    return String(text).replace(HIDDEN, (char) => {
      const code = char.charCodeAt(0);
      if (code < 0x20) return String.fromCharCode(0x2400 + code);
      if (code === 0x7f) return "\u2421";
      return `[U+${code.toString(16).toUpperCase().padStart(4, "0")}]`;
    });
  }

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = visible(value);
      else if (key === "className") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "value") node.setAttribute(key, String(value));
      else node.setAttribute(key, value === true ? "" : visible(value));
    }
    for (const child of children) {
      if (child !== null && child !== undefined && child !== false) node.append(child);
    }
    return node;
  }

  // ---- the server's markdown tree -> elements ----
  const DOC_TAGS = new Set([
    "p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "em", "strong",
    "s", "a", "table", "thead", "tbody", "tr", "th", "td", "hr", "br",
  ]);
  const SAFE_HREF = /^(https?:|mailto:)/i;

  function docNode(node) {
    if (typeof node === "string") return document.createTextNode(visible(node));
    if (!Array.isArray(node) || !DOC_TAGS.has(node[0])) return document.createTextNode("");
    const [tag, attrs, ...kids] = node;
    const out = document.createElement(tag);
    const a = attrs && typeof attrs === "object" ? attrs : {};
    if (tag === "ol" && Number.isInteger(a.start)) out.start = a.start;
    if (tag === "li" && Number.isInteger(a.value)) out.value = a.value;
    if ((tag === "th" || tag === "td") && ["left", "center", "right"].includes(a["data-align"])) out.dataset.align = a["data-align"];
    if (tag === "a" && typeof a.href === "string" && SAFE_HREF.test(a.href)) {
      out.href = a.href;
      out.rel = "noopener noreferrer";
      out.target = "_blank";
    }
    for (const kid of kids) out.append(docNode(kid));
    if (tag === "table") {
      // A wide table scrolls inside its own box (reachable by keyboard), never the page.
      return el("div", { className: "table-box", tabindex: "0", role: "region", "aria-label": "Table" }, out);
    }
    return out;
  }

  function doc(nodes) {
    const fragment = document.createDocumentFragment();
    for (const node of nodes || []) fragment.append(docNode(node));
    return fragment;
  }

  // ---- status line, notices, announcements ----
  function setConnection(kind, text) {
    const node = byId("connection");
    node.dataset.state = kind;
    node.textContent = text;
    document.body.dataset.connection = kind;
  }

  let noticeTimer = null;
  function notice(text, outcome, askId) {
    const node = byId("notice");
    node.textContent = visible(text);
    node.dataset.outcome = outcome || "";
    node.dataset.askId = askId || "";
    node.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(clearNotice, NOTICE_MS);
  }

  function clearNotice() {
    clearTimeout(noticeTimer);
    const node = byId("notice");
    node.hidden = true;
    node.textContent = "";
  }

  function announce(text) {
    const node = byId("announcer");
    node.textContent = "";
    setTimeout(() => { node.textContent = visible(text); }, 50);
  }

  // Who serves this page: the harness itself, or a question server such as dsh-inbox serve.
  const SERVER = document.documentElement.dataset.server || "the harness";
  const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

  const OUTCOME_TEXT = {
    answered: ["Answer sent. Thank you.", "This question was answered in another tab."],
    cancelled: ["Question closed; the agent was told you declined.", "This question was closed in another tab."],
    withdrawn: ["The agent withdrew this question.", "The agent withdrew this question."],
    stopped: ["The question server stopped.", "The question server stopped."],
  };

  // ---- drafts survive a reload (per tab) ----
  const draftKey = (askId) => `dsh-user-questions-draft:${askId}`;
  function loadDraft(askId) {
    try {
      return JSON.parse(sessionStorage.getItem(draftKey(askId)) || "null");
    } catch (_) {
      return null;
    }
  }
  function saveDraft(askId, draft) {
    try {
      sessionStorage.setItem(draftKey(askId), JSON.stringify(draft));
    } catch (_) {
      // Storage full or disabled: the draft lives only as long as the page.
    }
  }
  function forgetDraft(askId) {
    try {
      sessionStorage.removeItem(draftKey(askId));
    } catch (_) {
      // Nothing to forget.
    }
  }

  // ---- queue ----
  function agentText(ask) {
    // A board that knows better names the asker itself (the inbox: harness label and agent).
    if (typeof ask.asker === "string") return `From ${ask.asker}`;
    return ask.agent === null || ask.agent === undefined ? "From your harness" : `From agent ${ask.agent}`;
  }

  function titleOf(ask) {
    const first = ask.questions[0] || { question: "" };
    const more = ask.questions.length > 1 ? ` (+${ask.questions.length - 1} more)` : "";
    return (first.header ? `${first.header}: ` : "") + first.question + more;
  }

  // Many events can arrive together (a reconnect, a burst of asks): draw the queue once for them.
  let queueTimer = null;
  function renderQueue() {
    byId("queue-count").textContent = String(state.asks.size);
    byId("waiting").hidden = state.asks.size > 0;
    byId("queue-panel").hidden = state.asks.size === 0;
    document.body.dataset.state = state.asks.size > 0 ? "asking" : "waiting";
    document.title = state.asks.size > 0 ? `(${state.asks.size}) Questions from your agent` : "Questions from your agent";
    if (queueTimer === null) queueTimer = setTimeout(drawQueue, 0);
  }

  function drawQueue() {
    queueTimer = null;
    const items = [];
    for (const ask of state.asks.values()) {
      const current = ask.id === state.currentId;
      const button = el(
        "button",
        { type: "button", "aria-current": current ? "true" : null, "data-ask-id": ask.id, onclick: () => select(ask.id, true) },
        el("span", { className: "agent", text: agentText(ask) }),
        el("span", { className: "title", text: titleOf(ask) }),
      );
      items.push(el("li", {}, button));
    }
    byId("queue").replaceChildren(...items);
  }

  function select(askId, focus) {
    if (askId !== state.currentId) {
      state.currentId = askId;
      const slot = byId("card-slot");
      if (askId === null) {
        slot.replaceChildren();
      } else {
        let card = state.cards.get(askId);
        if (!card) {
          card = buildCard(state.asks.get(askId));
          state.cards.set(askId, card);
        }
        card.setStale(state.stale);
        slot.replaceChildren(card.node);
        if (focus) card.focus();
      }
    }
    renderQueue();
  }

  function ensureCurrent(focus) {
    if (state.currentId !== null && state.asks.has(state.currentId)) return renderQueue();
    const first = state.asks.keys().next();
    select(first.done ? null : first.value, focus);
    if (first.done && focus) byId("waiting-title").focus();
  }

  // ---- cards ----
  function isPlanReview(question) {
    return Boolean(question.intent && question.intent.kind === "plan-review" && typeof question.detail === "string");
  }

  function buildCard(ask) {
    const total = ask.questions.length;
    const node = el("article", { className: "card", "data-ask-id": ask.id, "aria-label": `Question from ${agentText(ask).slice(5)}` });
    const form = el("form", { novalidate: true });
    const draft = loadDraft(ask.id) || { page: 0, items: {}, skipped: [] };
    const pages = ask.questions.map((question, index) => buildPage(ask, question, index, total, draft));
    const skipped = new Set(draft.skipped || []);
    const review = total > 1 ? buildReview(ask) : null;
    let page = 0;
    let changing = false; // a page opened from the review returns to it
    const card = { node, pages, ask };

    const persist = () => {
      const items = {};
      pages.forEach((p, i) => { items[ask.questions[i].id] = p.snapshot(); });
      saveDraft(ask.id, { page, items, skipped: [...skipped] });
    };
    form.addEventListener("input", persist);
    form.addEventListener("change", persist);

    const show = (index) => {
      page = index;
      pages.forEach((p, i) => { p.section.hidden = i !== index; });
      if (review) review.section.hidden = index !== total;
      if (index === total) {
        review.fill(collectSummaries());
        review.section.querySelector(".question-text").focus();
      } else {
        pages[index].section.querySelector(".question-text").focus();
      }
      persist();
    };
    card.focus = () => {
      const open = node.querySelector("section:not([hidden]) .question-text");
      if (open) open.focus();
    };
    card.setStale = (stale) => {
      if (stale) node.dataset.stale = "";
      else delete node.dataset.stale;
      for (const control of node.querySelectorAll("button, input, textarea")) control.disabled = stale || control.dataset.busy === "1";
    };
    card.currentPage = () => (page < total ? pages[page] : null);

    const collect = () => pages.map((p, i) => (skipped.has(i) ? { id: ask.questions[i].id, selected: [] } : p.read()));
    const collectSummaries = () =>
      pages.map((p, i) => ({
        question: ask.questions[i].question,
        answer: skipped.has(i) ? "Skipped" : p.summary(),
        change: () => {
          changing = true;
          show(i);
        },
      }));

    const advance = (item, index) => {
      if (item.error) {
        pages[index].fail(item.error);
        return;
      }
      pages[index].fail("");
      if (changing && review) {
        changing = false;
        return show(total);
      }
      if (index + 1 < total) return show(index + 1);
      if (review) return show(total);
      submit(ask, collect(), pages[index]);
    };

    pages.forEach((p, index) => {
      p.onSkip = () => { skipped.add(index); p.fixed = null; advance({}, index); };
      p.onNext = () => { skipped.delete(index); advance(p.read(), index); };
      p.onChosen = (item) => { skipped.delete(index); p.fixed = item; advance(item, index); };
      p.onBack = () => show(index - 1);
      p.onClose = () => cancel(ask, p);
      form.append(p.section);
    });
    if (review) {
      review.onBack = () => show(total - 1);
      review.onSubmit = () => {
        const items = collect();
        const bad = items.findIndex((item) => item.error);
        if (bad >= 0) {
          show(bad);
          pages[bad].fail(items[bad].error);
          return;
        }
        submit(ask, items, review);
      };
      review.onClose = () => cancel(ask, review);
      form.append(review.section);
    }
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (page < total) pages[page].onNext();
      else review.onSubmit();
    });
    page = Math.min(Math.max(0, Number(draft.page) || 0), review ? total : total - 1);
    pages.forEach((p, i) => { p.section.hidden = i !== page; });
    if (review) {
      review.section.hidden = page !== total;
      if (page === total) review.fill(collectSummaries());
    }
    node.append(form);
    return card;
  }

  function button(text, className, onclick, type) {
    return el("button", { type: type || "button", className: `btn ${className}`, text, onclick });
  }

  function buildReview(ask) {
    const titleId = nextId("q");
    const errorId = nextId("err");
    const list = el("ol", { className: "review" });
    const error = el("p", { id: errorId, className: "error", role: "alert" });
    const review = { section: null };
    review.section = el(
      "section",
      { className: "review-step", "aria-labelledby": titleId, "aria-describedby": errorId },
      el("p", { className: "meta" }, el("span", { className: "agent", text: agentText(ask) }), el("span", { text: "Review" })),
      el("h2", { id: titleId, className: "question-text", tabindex: "-1", text: "Review your answers" }),
      list,
      error,
      el(
        "div",
        { className: "actions" },
        button("Back", "", () => review.onBack()),
        el("span", { className: "spacer" }),
        button(`Close all ${ask.questions.length} questions`, "quiet close", () => review.onClose()),
        button("Submit answers", "primary submit-all", null, "submit"),
      ),
    );
    review.fail = (text) => { error.textContent = visible(text); };
    review.fill = (rows) => {
      list.replaceChildren(
        ...rows.map((row, index) =>
          el(
            "li",
            {},
            el("span", { className: "q", text: `${index + 1}. ${row.question}` }),
            el("span", { className: "a", text: row.answer }),
            button("Change", "change", row.change),
          ),
        ),
      );
    };
    return review;
  }

  function buildPage(ask, question, index, total, draft) {
    const page = { fixed: null };
    const saved = (draft.items || {})[question.id] || {};
    const titleId = nextId("q");
    const errorId = nextId("err");
    const section = el("section", { "aria-labelledby": titleId, "data-question-id": question.id });
    const fieldset = el("fieldset", { "aria-describedby": errorId });
    const legend = el(
      "legend",
      {},
      question.header ? el("span", { className: "header-chip", text: question.header }) : null,
      el("h2", { id: titleId, className: "question-text", tabindex: "-1", text: question.question }),
    );
    fieldset.append(legend);
    const meta = el(
      "p",
      { className: "meta" },
      el("span", { className: "agent", text: agentText(ask) }),
      total > 1 ? el("span", { className: "progress", text: `Question ${index + 1} of ${total}` }) : null,
    );
    const error = el("p", { id: errorId, className: "error", role: "alert" });
    page.fail = (text) => { error.textContent = visible(text); };
    page.section = section;
    section.append(meta, fieldset);

    const nav = (...buttons) => el("div", { className: "actions" }, ...buttons);
    const back = index > 0 ? button("Back", "", () => page.onBack()) : null;
    const last = index + 1 === total;
    const closeText = total > 1 ? `Close all ${total} questions` : "Close question";
    const detailDoc = Array.isArray(question.detailDoc) ? question.detailDoc : null;

    if (isPlanReview(question)) {
      const plan = el("section", { className: "plan", "aria-label": "The plan", tabindex: "0" });
      if (detailDoc) plan.append(doc(detailDoc));
      else plan.append(el("p", { text: question.detail }));
      const feedbackId = nextId("fb");
      const feedback = el("textarea", { id: feedbackId, className: "feedback", rows: "4" });
      feedback.value = typeof saved.feedback === "string" ? saved.feedback : "";
      const approve = question.intent.approve;
      const keep = (question.options || []).map((o) => o.label).find((label) => label !== approve);
      fieldset.append(
        plan,
        el("label", { className: "field-label", for: feedbackId, text: "Feedback for the agent (optional)" }),
        feedback,
      );
      section.append(
        error,
        nav(
          back,
          button(last && total === 1 ? "Approve" : "Approve and continue", "primary approve", () => {
            if (feedback.value.trim()) {
              return page.fail("Approving sends no feedback: clear it, or choose Keep planning.");
            }
            page.onChosen({ id: question.id, selected: [approve] });
          }),
          button("Keep planning", "keep", () => {
            if (feedback.value.trim()) return page.onChosen({ id: question.id, selected: [], custom: feedback.value });
            if (keep === undefined) return page.fail("Write what the agent should change.");
            page.onChosen({ id: question.id, selected: [keep] });
          }),
          el("span", { className: "spacer" }),
          button(total > 1 ? closeText : "Talk instead", "quiet talk", () => page.onClose()),
        ),
      );
      if (saved.fixed) page.fixed = saved.fixed;
      page.read = () => page.fixed || { error: "Choose Approve or Keep planning." };
      page.snapshot = () => ({ feedback: feedback.value, fixed: page.fixed });
      page.summary = () => {
        const item = page.read();
        if (item.error) return "Not answered yet";
        return item.custom !== undefined ? `Keep planning: ${item.custom}` : item.selected.join(", ");
      };
      page.choices = () => [];
      return page;
    }

    if (typeof question.detail === "string" && question.detail) {
      const detail = el("div", { className: "detail" });
      if (detailDoc) detail.append(doc(detailDoc));
      else detail.textContent = visible(question.detail);
      fieldset.append(detail);
    }
    const options = question.options || [];
    const multi = Boolean(question.multiSelect);
    const kind = multi ? "checkbox" : "radio";
    const group = nextId("choice");
    let otherToggle = null;
    let otherText = null;
    let freeText = null;
    const picked = new Set(saved.selected || []);
    if (options.length) {
      const list = el("div", { className: "options" });
      options.forEach((option, n) => {
        list.append(
          el(
            "label",
            { className: "option" },
            el("input", { type: kind, name: group, value: option.label, className: "choice", checked: picked.has(option.label) }),
            el("span", { className: "key", "aria-hidden": "true", text: n < 9 ? `${n + 1}` : "" }),
            el("span", { className: "label", text: option.label }),
            option.description ? el("span", { className: "description", text: option.description }) : null,
          ),
        );
      });
      otherToggle = el("input", { type: kind, name: group, value: "", className: "other-toggle", checked: Boolean(saved.other) });
      otherText = el("input", { type: "text", className: "other-text", "aria-label": "Other answer", placeholder: "Type your own answer", maxlength: "10000" });
      otherText.value = typeof saved.otherText === "string" ? saved.otherText : "";
      otherText.addEventListener("input", () => { otherToggle.checked = otherText.value.trim() !== ""; });
      list.append(
        el(
          "label",
          { className: "option other" },
          otherToggle,
          el("span", { className: "key", "aria-hidden": "true", text: options.length < 9 ? `${options.length + 1}` : "" }),
          el("span", { className: "label", text: "Other" }),
        ),
        otherText,
      );
      fieldset.append(list);
      fieldset.append(
        el(
          "p",
          { className: "hint" },
          multi ? "Pick any that apply. " : "",
          el("span", { className: "keys-hint", text: multi ? "Number keys pick options." : "Number keys pick an option." }),
        ),
      );
    } else {
      const fieldId = nextId("free");
      freeText = el("textarea", { id: fieldId, className: "free-text", rows: "3", maxlength: "10000" });
      freeText.value = typeof saved.free === "string" ? saved.free : "";
      fieldset.append(el("label", { className: "field-label", for: fieldId, text: "Your answer" }), freeText);
    }
    page.choices = () => [...fieldset.querySelectorAll("input.choice, input.other-toggle")];
    page.read = () => {
      if (freeText) {
        if (!freeText.value.trim()) return { error: "Type an answer, or press Skip." };
        return { id: question.id, selected: [], custom: freeText.value };
      }
      const selected = [...fieldset.querySelectorAll("input.choice:checked")].map((input) => input.value);
      const other = otherToggle.checked;
      if (other && !otherText.value.trim()) return { error: "Type your answer next to Other, or untick it." };
      if (!selected.length && !other) return { error: "Choose an option, or press Skip." };
      const item = { id: question.id, selected };
      if (other) item.custom = otherText.value;
      return item;
    };
    page.snapshot = () => {
      if (freeText) return { free: freeText.value };
      return {
        selected: [...fieldset.querySelectorAll("input.choice:checked")].map((input) => input.value),
        other: otherToggle.checked,
        otherText: otherText.value,
      };
    };
    page.summary = () => {
      const item = page.read();
      if (item.error) return "Not answered yet";
      return [...item.selected, ...(item.custom !== undefined ? [item.custom] : [])].join(", ");
    };
    const nextText = last ? (total > 1 ? "Review answers" : "Submit") : "Next";
    section.append(
      error,
      nav(
        back,
        button("Skip", "skip", () => page.onSkip()),
        el("span", { className: "spacer" }),
        button(closeText, "quiet close", () => page.onClose()),
        button(nextText, "primary next", null, "submit"),
      ),
    );
    return page;
  }

  // Number keys pick the options of the question on screen (not while typing).
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || !/^[1-9]$/.test(event.key)) return;
    const target = event.target;
    if (target && (target.tagName === "TEXTAREA" || (target.tagName === "INPUT" && target.type === "text"))) return;
    const card = state.cards.get(state.currentId);
    const page = card && card.currentPage();
    if (!page || state.stale) return;
    const choice = page.choices()[Number(event.key) - 1];
    if (!choice || choice.disabled) return;
    event.preventDefault();
    choice.click();
    choice.focus();
    if (choice.classList.contains("other-toggle") && choice.checked) {
      const text = page.section.querySelector(".other-text");
      if (text) text.focus();
    }
  });

  // ---- talking to the server ----
  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "same-origin",
    });
    let data = {};
    try {
      data = await response.json();
    } catch (_) {
      data = { message: `${response.status} ${response.statusText}` };
    }
    return { status: response.status, data };
  }

  function setBusy(card, busy) {
    if (!card) return;
    for (const node of card.node.querySelectorAll("button")) {
      node.dataset.busy = busy ? "1" : "";
      node.disabled = busy || state.stale;
    }
  }

  async function send(ask, page, path, body) {
    const card = state.cards.get(ask.id);
    setBusy(card, true);
    clearNotice();
    state.sent.add(ask.id);
    try {
      const { status, data } = await post(path, body);
      if (status === 200) return;
      state.sent.delete(ask.id);
      if (status === 409) {
        notice(data.message || "That question is no longer pending.", "not-pending", ask.id);
        drop(ask.id, true);
        return;
      } else if (status === 422) {
        page.fail(`The server refused the answer: ${(data.problems || []).join("; ")}`);
      } else {
        page.fail(`The server refused: ${data.message || (data.problems || []).join("; ") || status}`);
      }
    } catch (_) {
      state.sent.delete(ask.id);
      page.fail(`Could not reach ${SERVER}: nothing was sent. Your answer is kept here; send it again once the page reconnects.`);
      reconnectSoon();
    }
    setBusy(card, false);
  }

  function submit(ask, items, page) {
    return send(ask, page, "answer", { id: ask.id, answer: { answers: items } });
  }

  function cancel(ask, page) {
    return send(ask, page, "cancel", { id: ask.id });
  }

  function drop(askId, focus) {
    state.asks.delete(askId);
    state.cards.delete(askId);
    forgetDraft(askId);
    const wasCurrent = state.currentId === askId;
    if (wasCurrent) {
      state.currentId = null;
      byId("card-slot").replaceChildren();
    }
    ensureCurrent(wasCurrent && focus);
  }

  function setStale(stale) {
    state.stale = stale;
    for (const card of state.cards.values()) card.setStale(stale);
    const offline = byId("offline");
    if (stale) {
      offline.textContent = `${capital(SERVER)} is unreachable, so answers cannot be sent. This page keeps trying and updates by itself when ${SERVER} is back.`;
      offline.hidden = false;
    } else {
      offline.hidden = true;
      offline.textContent = "";
    }
  }

  function onSnapshot(data) {
    state.failures = 0;
    setConnection("open", "Connected");
    const before = state.currentId;
    state.asks = new Map(data.pending.map((ask) => [ask.id, ask]));
    for (const id of [...state.cards.keys()]) {
      if (!state.asks.has(id)) {
        state.cards.delete(id);
        forgetDraft(id);
      }
    }
    setStale(false);
    if (before !== null && !state.asks.has(before)) {
      notice("The question you were on was settled while this page was away.", "gone", "");
      state.currentId = null;
      byId("card-slot").replaceChildren();
    }
    ensureCurrent(before === null || !state.asks.has(before));
  }

  function onAdded(ask) {
    if (state.asks.has(ask.id)) return;
    state.asks.set(ask.id, ask);
    if (state.currentId !== null) announce(`New question ${agentText(ask).toLowerCase()}. ${state.asks.size} waiting.`);
    ensureCurrent(state.currentId === null);
  }

  function onResolved(data) {
    if (!state.asks.has(data.id)) return;
    if (data.id === state.currentId) {
      const texts = OUTCOME_TEXT[data.outcome] || ["This question was settled.", "This question was settled."];
      notice(texts[state.sent.has(data.id) ? 0 : 1], data.outcome, data.id);
    }
    state.sent.delete(data.id);
    drop(data.id, true);
  }

  function onBye(data) {
    for (const id of state.asks.keys()) forgetDraft(id);
    state.asks.clear();
    state.cards.clear();
    state.currentId = null;
    byId("card-slot").replaceChildren();
    renderQueue();
    notice(`The question server stopped: ${data.reason}`, "bye", "");
  }

  // The page runs its own reconnects (EventSource's would retry for ever without a word), so
  // it can say when the harness is gone: after a few failures the cards go stale.
  let retryTimer = null;
  let watchdog = null;
  function heard() {
    state.lastWord = Date.now();
  }

  function connect() {
    clearTimeout(retryTimer);
    retryTimer = null;
    if (state.source) state.source.close();
    const source = new EventSource("events");
    state.source = source;
    heard();
    const on = (name, handler) =>
      source.addEventListener(name, (event) => {
        heard();
        handler(JSON.parse(event.data));
      });
    source.addEventListener("open", heard);
    source.addEventListener("error", () => {
      if (state.source === source) failed();
    });
    on("snapshot", onSnapshot);
    on("added", onAdded);
    on("resolved", onResolved);
    on("ping", () => {});
    on("bye", onBye);
  }

  function failed() {
    if (state.source) state.source.close();
    state.source = null;
    state.failures += 1;
    if (state.failures >= RETRIES_BEFORE_UNREACHABLE) {
      // The stream may be refused while the harness is up (too many open tabs): ask once
      // whether it answers at all before calling it unreachable.
      fetch("state", { cache: "no-store", credentials: "same-origin", signal: AbortSignal.timeout(3000) })
        .then((response) => {
          if (!response.ok) throw new Error(String(response.status));
          if (state.failures > 0) setConnection("retrying", `Reconnecting\u2026 (${SERVER} is busy)`);
        })
        .catch(() => {
          if (state.failures === 0) return; // reconnected meanwhile
          setConnection("unreachable", `${capital(SERVER)} unreachable: retrying`);
          setStale(true);
        });
    } else {
      setConnection("retrying", "Reconnecting\u2026");
    }
    const delay = Math.min(1000 * 2 ** Math.max(0, state.failures - 1), 5000);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(connect, delay);
  }

  function reconnectSoon() {
    if (state.source) failed();
  }

  watchdog = setInterval(() => {
    if (state.source && Date.now() - state.lastWord > SILENCE_MS) failed();
  }, 5000);

  connect();
})();
