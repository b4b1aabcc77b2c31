// The question page. Model-written text only ever reaches the DOM as text nodes
// (textContent, append of strings) or attribute values: never as HTML.
"use strict";
(() => {
  const state = {
    asks: new Map(), // id -> ask in wire form, oldest first
    cards: new Map(), // id -> its card element, kept so switching asks keeps what was typed
    currentId: null,
    sent: new Set(), // ids this tab answered or closed
  };
  const byId = (id) => document.getElementById(id);
  let uid = 0;
  const nextId = (prefix) => `${prefix}-${++uid}`;

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) {
      if (child !== null && child !== undefined && child !== false) node.append(child);
    }
    return node;
  }

  // ---- safe markdown: a small subset, built as DOM nodes ----
  const INLINE =
    /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|(?<!\w)_([^_\s][^_]*)_(?!\w)|\[([^\]]+)\]\(([^)\s]+)\)/g;

  function inline(text) {
    const out = [];
    const re = new RegExp(INLINE.source, "g");
    let last = 0;
    let m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) out.push(text.slice(last, m.index));
      if (m[1]) out.push(el("code", { text: m[2] }));
      else if (m[3] !== undefined) out.push(el("strong", {}, ...inline(m[3])));
      else if (m[4] !== undefined) out.push(el("strong", {}, ...inline(m[4])));
      else if (m[5] !== undefined) out.push(el("em", {}, ...inline(m[5])));
      else if (m[6] !== undefined) out.push(el("em", {}, ...inline(m[6])));
      // Links are shown with their target as text and are never followed from here.
      else if (m[7] !== undefined) out.push(...inline(m[7]), ` (${m[8]})`);
      last = re.lastIndex;
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }

  function markdown(source) {
    const root = document.createDocumentFragment();
    const lines = source.replace(/\r\n?/g, "\n").split("\n");
    let para = [];
    let list = null;
    const flush = () => {
      if (para.length) root.append(el("p", {}, ...inline(para.join(" "))));
      para = [];
    };
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      const fence = line.match(/^\s{0,3}(```|~~~)/);
      if (fence) {
        flush();
        list = null;
        const code = [];
        for (i++; i < lines.length && !lines[i].trim().startsWith(fence[1]); i++) code.push(lines[i]);
        root.append(el("pre", {}, el("code", { text: code.join("\n") })));
        continue;
      }
      const heading = line.match(/^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/);
      if (heading) {
        flush();
        list = null;
        // The card's question is an h2, so the plan's own levels start at h3.
        root.append(el(`h${Math.min(6, heading[1].length + 2)}`, {}, ...inline(heading[2])));
        continue;
      }
      if (!line.trim()) {
        flush();
        list = null;
        continue;
      }
      if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) {
        flush();
        list = null;
        root.append(el("hr"));
        continue;
      }
      const item = line.match(/^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/);
      if (item) {
        flush();
        const ordered = /\d/.test(item[1]);
        if (!list || list.ordered !== ordered) {
          list = { ordered, node: el(ordered ? "ol" : "ul") };
          root.append(list.node);
        }
        list.node.append(el("li", {}, ...inline(item[2])));
        continue;
      }
      const quote = line.match(/^\s{0,3}>\s?(.*)$/);
      if (quote) {
        flush();
        list = null;
        root.append(el("blockquote", {}, el("p", {}, ...inline(quote[1]))));
        continue;
      }
      if (list && /^\s+\S/.test(line)) {
        list.node.lastElementChild.append(" ", ...inline(line.trim()));
        continue;
      }
      list = null;
      para.push(line.trim());
    }
    flush();
    return root;
  }

  // ---- status line and notices ----
  function setConnection(kind, text) {
    const node = byId("connection");
    node.dataset.state = kind;
    node.textContent = text;
  }

  function notice(text, outcome, askId) {
    const node = byId("notice");
    node.textContent = text;
    node.dataset.outcome = outcome || "";
    node.dataset.askId = askId || "";
    node.hidden = false;
  }

  const OUTCOME_TEXT = {
    answered: ["Answer sent. Thank you.", "This question was answered in another tab."],
    cancelled: ["Question closed; the agent was told you declined.", "This question was closed in another tab."],
    withdrawn: ["The agent withdrew this question.", "The agent withdrew this question."],
    stopped: ["The question server stopped.", "The question server stopped."],
  };

  // ---- queue ----
  function agentText(ask) {
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
        slot.replaceChildren(card);
        if (focus) card.querySelector("section:not([hidden]) .question-text").focus();
      }
    }
    renderQueue();
  }

  function ensureCurrent(focus) {
    if (state.currentId !== null && state.asks.has(state.currentId)) return renderQueue();
    const first = state.asks.keys().next();
    select(first.done ? null : first.value, focus);
  }

  // ---- cards ----
  function isPlanReview(question) {
    return Boolean(question.intent && question.intent.kind === "plan-review" && typeof question.detail === "string");
  }

  function buildCard(ask) {
    const total = ask.questions.length;
    const card = el("article", { className: "card", "data-ask-id": ask.id, "aria-label": `Question from ${agentText(ask).slice(5)}` });
    const form = el("form", { novalidate: true });
    const pages = ask.questions.map((question, index) => buildPage(ask, question, index, total));
    const skipped = new Set();
    let page = 0;

    const show = (index) => {
      page = index;
      pages.forEach((p, i) => { p.section.hidden = i !== index; });
      pages[index].section.querySelector(".question-text").focus();
    };

    const collect = () => pages.map((p, i) => (skipped.has(i) ? { id: ask.questions[i].id, selected: [] } : p.read()));

    const advance = (item, index) => {
      if (item.error) {
        pages[index].fail(item.error);
        return;
      }
      pages[index].fail("");
      if (index + 1 < total) return show(index + 1);
      submit(ask, collect(), pages[index]);
    };

    pages.forEach((p, index) => {
      p.onSkip = () => { skipped.add(index); advance({}, index); };
      p.onNext = () => { skipped.delete(index); advance(p.read(), index); };
      p.onChosen = (item) => { skipped.delete(index); p.fixed = item; advance(item, index); };
      p.onBack = () => show(index - 1);
      p.onClose = () => cancel(ask, p);
      form.append(p.section);
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      pages[page].onNext();
    });
    pages.forEach((p, i) => { p.section.hidden = i !== 0; });
    card.append(form);
    return card;
  }

  function buildPage(ask, question, index, total) {
    const page = { fixed: null };
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
    page.fail = (text) => { error.textContent = text; };
    page.section = section;
    section.append(meta, fieldset);

    const nav = (...buttons) => el("div", { className: "actions" }, ...buttons);
    const button = (text, className, onclick, type) =>
      el("button", { type: type || "button", className: `btn ${className}`, text, onclick });
    const back = index > 0 ? button("Back", "", () => page.onBack()) : null;
    const last = index + 1 === total;

    if (isPlanReview(question)) {
      const plan = el("section", { className: "plan", "aria-label": "The plan" });
      plan.append(markdown(question.detail));
      const feedbackId = nextId("fb");
      const feedback = el("textarea", { id: feedbackId, className: "feedback", rows: "4" });
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
          button(last ? "Approve" : "Approve and continue", "primary approve", () => {
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
          button("Talk instead", "quiet talk", () => page.onClose()),
        ),
      );
      page.read = () => page.fixed || { error: "Choose Approve or Keep planning." };
      return page;
    }

    if (typeof question.detail === "string" && question.detail) {
      fieldset.append(el("div", { className: "detail", text: question.detail }));
    }
    const options = question.options || [];
    const multi = Boolean(question.multiSelect);
    const kind = multi ? "checkbox" : "radio";
    const group = nextId("choice");
    let otherToggle = null;
    let otherText = null;
    let freeText = null;
    if (options.length) {
      const list = el("div", { className: "options" });
      for (const option of options) {
        const descId = option.description ? nextId("desc") : null;
        list.append(
          el(
            "label",
            { className: "option" },
            el("input", { type: kind, name: group, value: option.label, className: "choice", "aria-describedby": descId }),
            el("span", { className: "label", text: option.label }),
            descId ? el("span", { id: descId, className: "description", text: option.description }) : null,
          ),
        );
      }
      otherToggle = el("input", { type: kind, name: group, value: "", className: "other-toggle" });
      otherText = el("input", { type: "text", className: "other-text", "aria-label": "Other answer", placeholder: "Type your own answer" });
      otherText.addEventListener("input", () => { otherToggle.checked = otherText.value.trim() !== ""; });
      list.append(
        el("label", { className: "option other" }, otherToggle, el("span", { className: "label", text: "Other" })),
        otherText,
      );
      fieldset.append(list);
      if (multi) fieldset.append(el("p", { className: "hint", text: "Pick any that apply." }));
    } else {
      const fieldId = nextId("free");
      freeText = el("textarea", { id: fieldId, className: "free-text", rows: "3" });
      fieldset.append(el("label", { className: "field-label", for: fieldId, text: "Your answer" }), freeText);
    }
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
    section.append(
      error,
      nav(
        back,
        button("Skip", "skip", () => page.onSkip()),
        el("span", { className: "spacer" }),
        button("Close question", "quiet close", () => page.onClose()),
        button(last ? (total > 1 ? "Submit answers" : "Submit") : "Next", "primary next", null, "submit"),
      ),
    );
    return page;
  }

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
    for (const node of card.querySelectorAll("button")) node.disabled = busy;
  }

  async function send(ask, page, path, body) {
    const card = state.cards.get(ask.id);
    setBusy(card, true);
    state.sent.add(ask.id);
    try {
      const { status, data } = await post(path, body);
      if (status === 200) return;
      state.sent.delete(ask.id);
      if (status === 409) {
        notice(data.message || "That question is no longer pending.", "not-pending", ask.id);
        drop(ask.id);
      } else if (status === 422) {
        page.fail(`The server refused the answer: ${(data.problems || []).join("; ")}`);
      } else {
        page.fail(`The server refused: ${data.message || (data.problems || []).join("; ") || status}`);
      }
    } catch (err) {
      state.sent.delete(ask.id);
      page.fail(`Could not reach the question server: ${err}`);
    }
    setBusy(card, false);
  }

  function submit(ask, items, page) {
    return send(ask, page, "answer", { id: ask.id, answer: { answers: items } });
  }

  function cancel(ask, page) {
    return send(ask, page, "cancel", { id: ask.id });
  }

  function drop(askId) {
    state.asks.delete(askId);
    state.cards.delete(askId);
    if (state.currentId === askId) {
      state.currentId = null;
      byId("card-slot").replaceChildren();
    }
    ensureCurrent(true);
  }

  function onSnapshot(data) {
    const before = state.currentId;
    state.asks = new Map(data.pending.map((ask) => [ask.id, ask]));
    for (const id of [...state.cards.keys()]) if (!state.asks.has(id)) state.cards.delete(id);
    if (before !== null && !state.asks.has(before)) {
      notice("The question you were on was settled while this page was away.", "gone", before);
      state.currentId = null;
      byId("card-slot").replaceChildren();
    }
    ensureCurrent(before === null);
  }

  function onAdded(ask) {
    state.asks.set(ask.id, ask);
    ensureCurrent(state.currentId === null);
  }

  function onResolved(data) {
    if (!state.asks.has(data.id)) return;
    if (data.id === state.currentId) {
      const texts = OUTCOME_TEXT[data.outcome] || ["This question was settled.", "This question was settled."];
      notice(texts[state.sent.has(data.id) ? 0 : 1], data.outcome, data.id);
    }
    state.sent.delete(data.id);
    drop(data.id);
  }

  function onBye(data) {
    state.asks.clear();
    state.cards.clear();
    state.currentId = null;
    byId("card-slot").replaceChildren();
    renderQueue();
    notice(`The question server stopped: ${data.reason}`, "bye", "");
  }

  function connect() {
    const source = new EventSource("events");
    source.addEventListener("open", () => setConnection("open", "Connected"));
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CLOSED) setConnection("closed", "Disconnected: reload the page to try again");
      else setConnection("retrying", "Reconnecting\u2026");
    });
    source.addEventListener("snapshot", (event) => onSnapshot(JSON.parse(event.data)));
    source.addEventListener("added", (event) => onAdded(JSON.parse(event.data)));
    source.addEventListener("resolved", (event) => onResolved(JSON.parse(event.data)));
    source.addEventListener("bye", (event) => onBye(JSON.parse(event.data)));
  }

  connect();
})();
