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
    synced: false, // a first snapshot arrived (from the stream, or from the tab that holds it)
    role: "solo", // "leader": holds the stream for every tab of this browser; "follower"; "solo"
    streamId: null,
  };
  const byId = (id) => document.getElementById(id);
  // The page's words in the reader's language: the server puts the catalog's messages in a
  // JSON data block (never run); a message missing there is shown in English.
  const MESSAGES = (() => {
    try {
      const data = JSON.parse(byId("dsh-messages").textContent);
      return data && typeof data === "object" ? data : {};
    } catch (_) {
      return {};
    }
  })();
  function t(message, vars) {
    const text = Object.prototype.hasOwnProperty.call(MESSAGES, message) ? MESSAGES[message] : message;
    if (!vars) return text;
    return text.replace(/\{(\w+)\}/g, (all, name) => (name in vars ? String(vars[name]) : all));
  }
  let uid = 0;
  const nextId = (prefix) => `${prefix}-${++uid}`;

  // Each question arrives as the core's one view of it (dsh_user_questions.view): every model
  // text inert (rules.inert_text), markdown as an element tree, a diff parsed, the kind of card.
  // The page shows only the view. visible() is only the second line: control and
  // bidirectional-formatting characters become the same <U+XXXX> stand-ins. An option's input
  // value is its wire label (option.label), so an answer names the option exactly.
  const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g;
  function visible(text) {
    return String(text).replace(HIDDEN, (char) => `<U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}>`);
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
      return el("div", { className: "table-box", tabindex: "0", role: "region", "aria-label": t("Table") }, out);
    }
    return out;
  }

  // An option's preview (its markdown tree in the view): shown for the option that has the
  // focus, else the one checked. Only questions with a previewed option get the box.
  function optionPreview(question, list) {
    const options = question.options;
    if (!options.some((option) => Array.isArray(option.preview))) return null;
    const title = el("p", { className: "preview-title" });
    const body = el("div", { className: "preview-body" });
    const box = el("div", { className: "preview", role: "region", "aria-label": t("Preview of the option"), tabindex: "0", hidden: true }, title, body);
    const inputs = [...list.querySelectorAll("input.choice")];
    const show = (n) => {
      const nodes = n >= 0 && Array.isArray(options[n].preview) ? options[n].preview : null;
      box.hidden = nodes === null;
      body.replaceChildren(nodes ? doc(nodes) : "");
      title.textContent = nodes ? `Preview: ${visible(options[n].shown)}` : "";
    };
    const checked = () => inputs.findIndex((input) => input.checked);
    inputs.forEach((input, n) => {
      input.addEventListener("focus", () => show(n));
      input.addEventListener("change", () => show(input.checked ? n : checked()));
    });
    show(checked());
    return box;
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
    relay({ type: "status", kind, text });
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
  const SERVER = document.documentElement.dataset.server || t("the harness");
  const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);
  const lowerFirst = (text) => text.charAt(0).toLowerCase() + text.slice(1);

  const OUTCOME_TEXT = {
    answered: [t("Answer sent. Thank you."), t("This question was answered in another tab.")],
    cancelled: [t("Question closed; the agent was told you declined."), t("This question was closed in another tab.")],
    withdrawn: [t("The agent withdrew this question."), t("The agent withdrew this question.")],
    stopped: [t("The question server stopped."), t("The question server stopped.")],
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
    if (typeof ask.asker === "string") return t("From {asker}", { asker: ask.asker });
    if (ask.agent === null || ask.agent === undefined) return t("From your harness");
    return t("From agent {agent}", { agent: typeof ask.agentShown === "string" ? ask.agentShown : ask.agent });
  }

  function titleOf(ask) {
    const first = ask.questions[0] || { question: "" };
    const more = ask.questions.length > 1 ? " " + t("(+{count} more)", { count: ask.questions.length - 1 }) : "";
    return (first.header ? `${own(first, first.header)}: ` : "") + own(first, first.question) + more;
  }

  // Many events can arrive together (a reconnect, a burst of asks): draw the queue once for them.
  let queueTimer = null;
  function renderQueue() {
    byId("queue-count").textContent = String(state.asks.size);
    // Until the first snapshot the page knows nothing: it says "Connecting", never "No questions".
    byId("loading").hidden = state.synced;
    byId("waiting").hidden = !state.synced || state.asks.size > 0;
    byId("queue-panel").hidden = state.asks.size === 0;
    document.body.dataset.state = state.asks.size > 0 ? "asking" : state.synced ? "waiting" : "loading";
    document.title = state.asks.size > 0 ? `(${state.asks.size}) ${t("Questions from your agent")}` : t("Questions from your agent");
    if (queueTimer === null) queueTimer = setTimeout(drawQueue, 0);
  }

  // The queue is drawn incrementally (items of settled asks removed, new ones appended), so a
  // Submit with thousands pending touches a few elements, not all of them. A snapshot (which
  // may reorder) redraws it whole.
  const queueItems = new Map(); // ask id -> its <li>
  let queueShown = null; // the id drawn as current
  let queueWhole = true;
  function drawQueue() {
    queueTimer = null;
    const list = byId("queue");
    if (queueWhole) {
      queueWhole = false;
      queueItems.clear();
      queueShown = null;
      list.replaceChildren();
    }
    for (const [id, li] of queueItems) {
      if (!state.asks.has(id)) {
        li.remove();
        queueItems.delete(id);
      }
    }
    const fresh = document.createDocumentFragment();
    for (const ask of state.asks.values()) {
      if (queueItems.has(ask.id)) continue;
      const button = el(
        "button",
        { type: "button", "data-ask-id": ask.id, onclick: () => select(ask.id, true) },
        el("span", { className: "agent", text: agentText(ask) }),
        el("span", { className: "title", text: titleOf(ask) }),
      );
      const li = el("li", {}, button);
      queueItems.set(ask.id, li);
      fresh.append(li);
    }
    list.append(fresh);
    if (queueShown !== state.currentId) {
      const before = queueShown !== null && queueItems.get(queueShown);
      if (before) before.firstChild.removeAttribute("aria-current");
      const now = state.currentId !== null && queueItems.get(state.currentId);
      if (now) now.firstChild.setAttribute("aria-current", "true");
      queueShown = now ? state.currentId : null;
    }
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
          tellOpened(askId);
        }
        card.setStale(state.stale);
        slot.replaceChildren(card.node);
        if (focus) card.focus();
      }
    }
    renderQueue();
  }

  // A server that keeps a log (dsh-inbox serve) records who opened a question, and offers
  // each card its history.
  const HISTORY = document.documentElement.dataset.history === "1";
  function tellOpened(askId) {
    if (!HISTORY) return;
    post("opened", { id: askId }).catch(() => {});
  }

  function historyOf(ask) {
    const list = el("ol", { className: "history-list" });
    const details = el("details", { className: "history" }, el("summary", { text: t("History") }), list);
    details.addEventListener("toggle", async () => {
      if (!details.open) return;
      list.replaceChildren(el("li", { text: t("Loading\u2026") }));
      try {
        const response = await fetch(`history?ask=${encodeURIComponent(ask.id)}`, { credentials: "same-origin" });
        const data = await response.json();
        if (!response.ok || !Array.isArray(data.events)) throw new Error(String(response.status));
        list.replaceChildren(...data.events.map((event) => el("li", { text: `${new Date(event.at).toLocaleTimeString()} ${event.text}` })));
      } catch (_) {
        list.replaceChildren(el("li", { text: t("The history could not be read.") }));
      }
    });
    return details;
  }

  function ensureCurrent(focus) {
    if (state.currentId !== null && state.asks.has(state.currentId)) return renderQueue();
    const first = state.asks.keys().next();
    select(first.done ? null : first.value, focus);
    if (first.done && focus) byId("waiting-title").focus();
  }

  // ---- cards ----
  // The review cards the page knows (the view's kind); any other kind is an ordinary question.
  const REVIEWS = {
    "plan-review": {
      box: t("The plan"), keep: t("Keep planning"), what: "plan",
      choose: t("Choose Approve or Keep planning."), change: t("Write what the agent should change."),
    },
    "diff-review": {
      box: t("The diff"), keep: t("Request changes"), what: "diff",
      choose: t("Choose Approve or Request changes."), change: t("Write what the agent should change."),
    },
  };
  function reviewOf(question) {
    const kind = question.kind;
    return Object.hasOwn(REVIEWS, kind) ? { ...REVIEWS[kind], kind } : null;
  }
  // A review card's header and question are the core's words (the server sends their
  // translations with the page's messages); any other question's text is the model's, as written.
  function own(question, text) {
    return Object.hasOwn(REVIEWS, question.kind) ? t(text) : text;
  }

  // ---- the diff view: files, hunks, numbered added/removed/context lines ----
  const DIFF_SIGN = { add: "+", del: "\u2212", ctx: " ", note: "" };
  const DIFF_WORD = { add: t("added"), del: t("removed"), ctx: t("unchanged"), note: "" };
  function diffView(diff) {
    const fragment = document.createDocumentFragment();
    for (const file of diff.files) {
      const path = file.old && file.new && file.old !== file.new ? `${file.old} \u2192 ${file.new}` : file.new || file.old || t("Changes");
      const box = el("div", { className: "diff-file" }, el("h3", { className: "diff-path", text: path }));
      for (const line of file.meta || []) box.append(el("div", { className: "diff-meta", text: line }));
      for (const hunk of file.hunks || []) {
        box.append(el("div", { className: "diff-hunk", text: hunk.header }));
        for (const [kind, oldNo, newNo, text] of hunk.lines || []) {
          box.append(
            el(
              "div",
              { className: `diff-line ${kind}`, "data-kind": kind },
              el("span", { className: "ln", text: oldNo === null ? "" : String(oldNo) }),
              el("span", { className: "ln", text: newNo === null ? "" : String(newNo) }),
              el("span", { className: "sign", "aria-hidden": "true", text: DIFF_SIGN[kind] || "" }),
              el("span", { className: "code" }, DIFF_WORD[kind] ? el("span", { className: "visually-hidden", text: `${DIFF_WORD[kind]}: ` }) : null, text),
            ),
          );
        }
      }
      fragment.append(box);
    }
    return fragment;
  }

  // Approve stays locked until the end of the box was scrolled into view: every line was shown.
  function lockUntilSeen(box, approve, hint) {
    approve.dataset.locked = "1";
    approve.disabled = true;
    const end = el("div", { className: "seen-end", "aria-hidden": "true" });
    box.append(end);
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((entry) => entry.isIntersecting)) return;
      observer.disconnect();
      approve.dataset.locked = "";
      approve.disabled = approve.dataset.busy === "1" || state.stale;
      hint.hidden = true;
    }, { root: box, threshold: 0 });
    observer.observe(end);
  }

  function buildCard(ask) {
    const total = ask.questions.length;
    const node = el("article", { className: "card", "data-ask-id": ask.id, "aria-label": t("Question {from}", { from: lowerFirst(agentText(ask)) }) });
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
        focusPage(pages[index]);
      }
      persist();
    };
    card.focus = () => {
      if (page < total) return focusPage(pages[page]);
      const open = node.querySelector("section:not([hidden]) .question-text");
      if (open) open.focus();
    };
    card.setStale = (stale) => {
      if (stale) node.dataset.stale = "";
      else delete node.dataset.stale;
      for (const control of node.querySelectorAll("button, input, textarea")) {
        control.disabled = stale || control.dataset.busy === "1" || control.dataset.locked === "1";
      }
    };
    card.currentPage = () => (page < total ? pages[page] : null);

    const collect = () => pages.map((p, i) => (skipped.has(i) ? { id: ask.questions[i].id, selected: [] } : p.read()));
    const collectSummaries = () =>
      pages.map((p, i) => ({
        question: ask.questions[i].question,
        answer: skipped.has(i) ? t("Skipped") : p.summary(),
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
    if (HISTORY) node.append(historyOf(ask));
    return card;
  }

  // A page takes the focus on its recommended option when it has one (focused, never checked),
  // else on its question.
  function focusPage(page) {
    const field = page.field && page.field();
    const target = field && !field.disabled ? field : page.recommended && !page.recommended.disabled ? page.recommended : page.section.querySelector(".question-text");
    target.focus();
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
      el("p", { className: "meta" }, el("span", { className: "agent", text: agentText(ask) }), el("span", { text: t("Review") })),
      el("h2", { id: titleId, className: "question-text", tabindex: "-1", text: t("Review your answers") }),
      list,
      error,
      el(
        "div",
        { className: "actions" },
        button(t("Back"), "", () => review.onBack()),
        el("span", { className: "spacer" }),
        button(t("Close all {count} questions", { count: ask.questions.length }), "quiet close", () => review.onClose()),
        button(t("Submit answers"), "primary submit-all", null, "submit"),
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
            button(t("Change"), "change", row.change),
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
      question.header ? el("span", { className: "header-chip", text: own(question, question.header) }) : null,
      el("h2", { id: titleId, className: "question-text", tabindex: "-1", text: own(question, question.question) }),
    );
    fieldset.append(legend);
    const meta = el(
      "p",
      { className: "meta" },
      el("span", { className: "agent", text: agentText(ask) }),
      total > 1 ? el("span", { className: "progress", text: t("Question {number} of {total}", { number: index + 1, total }) }) : null,
    );
    const error = el("p", { id: errorId, className: "error", role: "alert" });
    page.fail = (text) => { error.textContent = visible(text); };
    page.section = section;
    section.append(meta, fieldset);

    const nav = (...buttons) => el("div", { className: "actions" }, ...buttons);
    const back = index > 0 ? button(t("Back"), "", () => page.onBack()) : null;
    const last = index + 1 === total;
    const closeText = total > 1 ? t("Close all {count} questions", { count: total }) : t("Close question");
    // The detail's markdown tree; none when the markdown was too deep to parse: its text then.
    const detailTree = Array.isArray(question.detail) ? question.detail : null;

    const review = reviewOf(question);
    if (review) {
      const box = el("section", { className: review.kind === "diff-review" ? "plan diff" : "plan", "aria-label": review.box, tabindex: "0" });
      if (review.kind === "diff-review") box.append(diffView(question.diff));
      else if (detailTree) box.append(doc(detailTree));
      else box.append(el("p", { text: question.detail_text }));
      // Feedback is the human's own words: offered only where the view's other allows them.
      const feedbackId = nextId("fb");
      const feedback = question.other ? el("textarea", { id: feedbackId, className: "feedback", rows: "4" }) : null;
      if (feedback) feedback.value = typeof saved.feedback === "string" ? saved.feedback : "";
      const words = () => (feedback ? feedback.value.trim() : "");
      const approve = question.options.find((option) => option.approves).label;
      const keep = question.options.map((o) => o.label).find((label) => label !== approve);
      const hintId = nextId("hint");
      const hint = el("p", { id: hintId, className: "hint approve-hint", text: (review.what === "diff" ? t("Approve opens once you have scrolled to the end of the diff.") : t("Approve opens once you have scrolled to the end of the plan.")) });
      fieldset.append(
        box,
        feedback ? el("label", { className: "field-label", for: feedbackId, text: t("Feedback for the agent (optional)") }) : null,
        feedback,
      );
      const approveButton = button(last && total === 1 ? t("Approve") : t("Approve and continue"), "primary approve", () => {
        if (words()) {
          return page.fail(t("Approving sends no feedback: clear it, or choose {keep}.", { keep: review.keep }));
        }
        page.onChosen({ id: question.id, selected: [approve] });
      });
      approveButton.setAttribute("aria-describedby", hintId);
      section.append(
        error,
        hint,
        nav(
          back,
          approveButton,
          button(review.keep, "keep", () => {
            if (words()) return page.onChosen({ id: question.id, selected: [], custom: feedback.value });
            if (keep === undefined) return page.fail(review.change);
            page.onChosen({ id: question.id, selected: [keep] });
          }),
          el("span", { className: "spacer" }),
          button(total > 1 ? closeText : t("Talk instead"), "quiet talk", () => page.onClose()),
        ),
      );
      lockUntilSeen(box, approveButton, hint);
      if (saved.fixed) page.fixed = saved.fixed;
      page.read = () => page.fixed || { error: review.choose };
      page.snapshot = () => ({ feedback: feedback ? feedback.value : "", fixed: page.fixed });
      page.summary = () => {
        const item = page.read();
        if (item.error) return t("Not answered yet");
        return item.custom !== undefined ? `${review.keep}: ${item.custom}` : item.selected.join(", ");
      };
      page.choices = () => [];
      return page;
    }

    if (question.detail_text) {
      const detail = el("div", { className: "detail" });
      if (detailTree) detail.append(doc(detailTree));
      else detail.textContent = visible(question.detail_text);
      fieldset.append(detail);
    }
    if (question.input && typeof question.input === "object") {
      // A typed answer (the view's input): a number, a date, a time, files of the workspace or
      // files to upload. The value goes to the server as it is; the core's rules judge it and
      // a refusal comes back naming the rule.
      const field = typedField(ask, question, saved, page);
      fieldset.append(...field.nodes);
      page.choices = () => [];
      page.read = field.read;
      page.snapshot = field.snapshot;
      page.summary = () => {
        const item = page.read();
        return item.error ? t("Not answered yet") : field.summary();
      };
      page.field = field.focus;
      const nextText = last ? (total > 1 ? t("Review answers") : t("Submit")) : t("Next");
      section.append(
        error,
        nav(
          back,
          button(t("Skip"), "skip", () => page.onSkip()),
          el("span", { className: "spacer" }),
          button(closeText, "quiet close", () => page.onClose()),
          button(nextText, "primary next", null, "submit"),
        ),
      );
      return page;
    }
    const options = question.options;
    const multi = Boolean(question.multi_select);
    const kind = multi ? "checkbox" : "radio";
    const group = nextId("choice");
    let otherToggle = null;
    let otherText = null;
    let freeText = null;
    const picked = new Set(saved.selected || []);
    if (options.length) {
      const list = el("div", { className: "options" });
      options.forEach((option, n) => {
        // The recommended option is marked (in words, so a screen reader says it too) and gets
        // the focus first; it is never checked for the human.
        const recommended = option.recommended === true;
        list.append(
          el(
            "label",
            { className: recommended ? "option recommended" : "option" },
            el("input", {
              type: kind, name: group, value: option.label, className: recommended ? "choice recommended" : "choice",
              checked: picked.has(option.label),
            }),
            el("span", { className: "key", "aria-hidden": "true", text: n < 9 ? `${n + 1}` : "" }),
            el(
              "span",
              { className: "label" },
              option.shown,
              recommended ? el("span", { className: "badge", text: " (Recommended)" }) : null,
            ),
            option.description ? el("span", { className: "description", text: option.description }) : null,
          ),
        );
      });
      // The view's other: false means the options only, no "Other" row for the human's words.
      if (question.other) {
        otherToggle = el("input", { type: kind, name: group, value: "", className: "other-toggle", checked: Boolean(saved.other) });
        otherText = el("input", { type: "text", className: "other-text", "aria-label": t("Other answer"), placeholder: t("Type your own answer"), maxlength: "10000" });
        otherText.value = typeof saved.otherText === "string" ? saved.otherText : "";
        otherText.addEventListener("input", () => { otherToggle.checked = otherText.value.trim() !== ""; });
        list.append(
          el(
            "label",
            { className: "option other" },
            otherToggle,
            el("span", { className: "key", "aria-hidden": "true", text: options.length < 9 ? `${options.length + 1}` : "" }),
            el("span", { className: "label", text: t("Other") }),
          ),
          otherText,
        );
      }
      fieldset.append(list);
      const preview = optionPreview(question, list);
      if (preview) fieldset.append(preview);
      fieldset.append(
        el(
          "p",
          { className: "hint" },
          multi ? t("Pick any that apply. ") : "",
          el("span", { className: "keys-hint", text: multi ? t("Number keys pick options.") : t("Number keys pick an option.") }),
        ),
      );
    } else {
      const fieldId = nextId("free");
      if (question.secret === true) {
        // A secret is typed masked, never autofilled or remembered, never in the draft.
        freeText = el("input", {
          id: fieldId, type: "password", className: "free-text secret", maxlength: "10000",
          autocomplete: "off", autocapitalize: "off", spellcheck: "false", "data-secret": "",
        });
        fieldset.append(
          el("label", { className: "field-label", for: fieldId, text: t("Your answer (secret: hidden as you type)") }),
          freeText,
          el("p", { className: "hint", text: t("The secret goes to your harness only; this page keeps no copy.") }),
        );
      } else {
        freeText = el("textarea", { id: fieldId, className: "free-text", rows: "3", maxlength: "10000" });
        freeText.value = typeof saved.free === "string" ? saved.free : "";
        fieldset.append(el("label", { className: "field-label", for: fieldId, text: t("Your answer") }), freeText);
      }
    }
    page.choices = () => [...fieldset.querySelectorAll("input.choice, input.other-toggle")];
    page.read = () => {
      if (freeText) {
        if (!freeText.value.trim()) return { error: t("Type an answer, or press Skip.") };
        return { id: question.id, selected: [], custom: freeText.value };
      }
      const selected = [...fieldset.querySelectorAll("input.choice:checked")].map((input) => input.value);
      const other = Boolean(otherToggle && otherToggle.checked);
      if (other && !otherText.value.trim()) return { error: t("Type your answer next to Other, or untick it.") };
      if (!selected.length && !other) return { error: t("Choose an option, or press Skip.") };
      const item = { id: question.id, selected };
      if (other) item.custom = otherText.value;
      return item;
    };
    page.snapshot = () => {
      if (freeText) return question.secret === true ? {} : { free: freeText.value };
      return {
        selected: [...fieldset.querySelectorAll("input.choice:checked")].map((input) => input.value),
        other: Boolean(otherToggle && otherToggle.checked),
        otherText: otherText ? otherText.value : "",
      };
    };
    page.summary = () => {
      const item = page.read();
      if (item.error) return t("Not answered yet");
      if (question.secret === true) return t("Secret given (hidden)");
      return [...item.selected, ...(item.custom !== undefined ? [item.custom] : [])].join(", ");
    };
    page.recommended = fieldset.querySelector("input.choice.recommended");
    const nextText = last ? (total > 1 ? t("Review answers") : t("Submit")) : t("Next");
    section.append(
      error,
      nav(
        back,
        button(t("Skip"), "skip", () => page.onSkip()),
        el("span", { className: "spacer" }),
        button(closeText, "quiet close", () => page.onClose()),
        button(nextText, "primary next", null, "submit"),
      ),
    );
    return page;
  }

  // ---- typed answers: number, date, time, datetime, files, upload ----
  const FILES_SHOWN = 200; // rows drawn at once in a file list; the filter narrows the rest
  const pad2 = (n) => String(n).padStart(2, "0");
  function sizeText(bytes) {
    if (!Number.isFinite(bytes)) return "";
    if (bytes < 1024) return t("{count} bytes", { count: bytes });
    const units = ["KB", "MB", "GB"];
    let value = bytes / 1024;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit += 1; }
    return `${value >= 10 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
  }
  // A page's local date and time with the browser's offset at that moment: RFC 3339.
  function withOffset(local) {
    const date = new Date(local);
    if (!local || Number.isNaN(date.getTime())) return null;
    const minutes = -date.getTimezoneOffset();
    const sign = minutes >= 0 ? "+" : "-";
    const off = Math.abs(minutes);
    const seconds = local.length === 16 ? `${local}:00` : local;
    return `${seconds}${sign}${pad2(Math.floor(off / 60))}:${pad2(off % 60)}`;
  }
  function offsetText() {
    const minutes = -new Date().getTimezoneOffset();
    const off = Math.abs(minutes);
    return `UTC${minutes >= 0 ? "+" : "-"}${pad2(Math.floor(off / 60))}:${pad2(off % 60)}`;
  }
  function numberHint(input) {
    const has = (key) => typeof input[key] === "number";
    let text = t("A number");
    if (has("min") && has("max")) text = t("A number between {low} and {high}", { low: input.min, high: input.max });
    else if (has("min")) text = t("A number of at least {low}", { low: input.min });
    else if (has("max")) text = t("A number of at most {high}", { high: input.max });
    if (has("step")) text = t("{number}, in steps of {step}", { number: text, step: input.step });
    if (input.unit) text = `${text} (${input.unit})`;
    return t("{number}. Up and Down arrows step it.", { number: text });
  }

  function typedField(ask, question, saved, page) {
    const input = question.input;
    const fieldId = nextId("value");
    const hintId = nextId("hint");
    const label = (text) => el("label", { className: "field-label", for: fieldId, text });
    const hint = (text) => el("p", { id: hintId, className: "hint", text });
    if (input.type === "files") return filesField(ask, question, saved, fieldId, hintId);
    if (input.type === "upload") return uploadField(ask, question, saved, fieldId, hintId);
    const kinds = { number: "number", date: "date", time: "time", datetime: "datetime-local" };
    const type = kinds[input.type];
    if (!type) {
      // A kind this page does not know: said, never guessed at.
      return {
        nodes: [el("p", { className: "hint", text: t("This question asks for a kind of answer this page cannot take ({kind}). Skip it, or answer it elsewhere.", { kind: input.type }) })],
        read: () => ({ error: t("This page cannot answer this question: press Skip.") }),
        snapshot: () => ({}),
        summary: () => "",
        focus: () => null,
      };
    }
    const box = el("input", {
      id: fieldId, type, className: `value-field ${input.type}`, "aria-describedby": hintId,
      min: typeof input.min === "number" || typeof input.min === "string" ? String(input.min) : null,
      max: typeof input.max === "number" || typeof input.max === "string" ? String(input.max) : null,
      step: typeof input.step === "number" ? String(input.step) : input.type === "number" ? "any" : null,
      inputmode: input.type === "number" ? "decimal" : null,
    });
    if (typeof saved.value === "string") box.value = saved.value;
    const words = {
      number: [t("Your answer"), numberHint(input)],
      date: [t("Date"), t("A date (year, month, day).")],
      time: [t("Time"), t("A time of day (hours and minutes).")],
      datetime: [t("Date and time"), t("A date and a time, in your time zone ({offset}); it is sent with that offset.", { offset: offsetText() })],
    }[input.type];
    const unit = input.type === "number" && input.unit ? el("span", { className: "unit", "aria-hidden": "true", text: input.unit }) : null;
    const read = () => {
      const raw = box.value.trim();
      const invalid = { error: t("{field}: that is not valid.", { field: words[0] }) };
      if (box.validity && box.validity.badInput) return invalid;
      if (!raw) return { error: t("Fill in {field}, or press Skip.", { field: words[0] }) };
      let value = raw;
      if (input.type === "number") value = Number(raw);
      if (input.type === "datetime") value = withOffset(raw);
      if (value === null || (typeof value === "number" && !Number.isFinite(value))) return invalid;
      return { id: question.id, selected: [], value };
    };
    return {
      nodes: [label(words[0]), el("div", { className: "value-row" }, box, unit), hint(words[1])],
      read,
      snapshot: () => ({ value: box.value }),
      summary: () => {
        const item = read();
        return input.type === "number" && input.unit ? `${item.value} ${input.unit}` : String(item.value);
      },
      focus: () => box,
    };
  }

  function filesField(ask, question, saved, fieldId, hintId) {
    const input = question.input;
    const max = Number.isInteger(input.max_count) ? input.max_count : null;
    const chosen = new Set(Array.isArray(saved.files) ? saved.files.filter((f) => typeof f === "string") : []);
    let all = null; // the candidates, once fetched
    let shownOf = new Map(); // each candidate as inert text, for display
    const filter = el("input", { id: fieldId, type: "search", className: "files-filter", "aria-describedby": hintId, autocomplete: "off", spellcheck: "false" });
    const status = el("p", { className: "hint files-status", role: "status", "aria-live": "polite", text: t("Loading the file list\u2026") });
    const list = el("div", { className: "files-list", role: "group", "aria-label": t("Files") });
    const picked = el("ul", { className: "files-chosen", "aria-label": t("Chosen files") });
    const count = typeof input.candidate_count === "number" ? input.candidate_count : null;
    let limitText = max === 1 ? t("Pick a file") : max ? t("Pick up to {count} files", { count: max }) : t("Pick files");
    if (input.pattern) limitText = t("{pick} matching {pattern}", { pick: limitText, pattern: input.pattern });
    if (count !== null) limitText = t("{pick} from {count} in the workspace", { pick: limitText, count: count.toLocaleString("en") });
    const atMost = () => (max === 1 ? t("At most one file: remove it first.") : t("At most {count} files: remove one first.", { count: max }));
    const drawChosen = () => {
      picked.replaceChildren(
        ...[...chosen].map((path) =>
          el("li", {}, el("span", { className: "path", text: shownOf.get(path) || path }),
            button(t("Remove"), "quiet remove", () => { chosen.delete(path); draw(); list.dispatchEvent(new Event("change", { bubbles: true })); })),
        ),
      );
      picked.hidden = chosen.size === 0;
    };
    const draw = () => {
      drawChosen();
      if (all === null) return;
      const term = filter.value.trim().toLowerCase();
      const rows = [];
      let matches = 0;
      for (const path of all) {
        if (term && !path.toLowerCase().includes(term)) continue;
        matches += 1;
        if (rows.length < FILES_SHOWN) rows.push(path);
      }
      list.replaceChildren(
        ...rows.map((path) => {
          const shown = shownOf.get(path) || path;
          const cut = shown.lastIndexOf("/");
          const box = el("input", { type: "checkbox", className: "file-choice", value: path, checked: chosen.has(path) });
          box.addEventListener("change", () => {
            if (box.checked && max !== null && chosen.size >= max) {
              box.checked = false;
              status.textContent = atMost();
              return;
            }
            if (box.checked) chosen.add(path);
            else chosen.delete(path);
            drawChosen();
          });
          return el("label", { className: "file-row" }, box,
            el("span", { className: "dir", text: cut >= 0 ? shown.slice(0, cut + 1) : "" }),
            el("span", { className: "base", text: cut >= 0 ? shown.slice(cut + 1) : shown }));
        }),
      );
      const counts = { matches: matches.toLocaleString("en"), total: all.length.toLocaleString("en"), chosen: chosen.size, shown: rows.length };
      status.textContent = matches > rows.length
        ? t("{matches} of {total} files match; showing the first {shown}: type to narrow. {chosen} chosen.", counts)
        : t("{matches} of {total} files match. {chosen} chosen.", counts);
    };
    let timer = null;
    filter.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(draw, all && all.length > 20000 ? 120 : 0); });
    fetch(`files?ask=${encodeURIComponent(ask.id)}&question=${encodeURIComponent(question.id)}`, { credentials: "same-origin", cache: "no-store" })
      .then((response) => (response.ok ? response.json() : Promise.reject(new Error(String(response.status)))))
      .then((data) => {
        all = Array.isArray(data.files) ? data.files.filter((f) => typeof f === "string") : [];
        shownOf = new Map(all.map((path, n) => [path, Array.isArray(data.shown) && typeof data.shown[n] === "string" ? data.shown[n] : path]));
        draw();
      })
      .catch(() => { status.textContent = t("The file list could not be loaded: reload the page to try again."); });
    drawChosen();
    return {
      nodes: [
        el("label", { className: "field-label", for: fieldId, text: t("Filter files") }),
        filter,
        el("p", { id: hintId, className: "hint", text: t("{pick}. Type to filter; Tab to the list, Space ticks a file.", { pick: limitText }) }),
        status, list, picked,
      ],
      read: () => (chosen.size ? { id: question.id, selected: [], value: [...chosen] } : { error: t("Pick at least one file, or press Skip.") }),
      snapshot: () => ({ files: [...chosen] }),
      summary: () => [...chosen].join(", "),
      focus: () => filter,
    };
  }

  function uploadField(ask, question, saved, fieldId, hintId) {
    const input = question.input;
    const max = Number.isInteger(input.max_count) ? input.max_count : null;
    const maxBytes = Number.isInteger(input.max_bytes) ? input.max_bytes : null;
    const accept = Array.isArray(input.accept) ? input.accept.filter((a) => typeof a === "string") : [];
    const done = Array.isArray(saved.uploads) ? saved.uploads.filter((u) => u && typeof u.upload === "string") : [];
    let busy = 0;
    const picker = el("input", {
      id: fieldId, type: "file", className: "upload-field", "aria-describedby": hintId,
      accept: accept.length ? accept.join(",") : null, multiple: max === null || max > 1,
    });
    const progressList = el("ul", { className: "uploads" });
    const status = el("p", { className: "hint upload-status", role: "status", "aria-live": "polite" });
    const limits = [
      max && max > 1 ? t("up to {count} files", { count: max }) : "",
      maxBytes ? t("each at most {size}", { size: sizeText(maxBytes) }) : "",
      accept.length ? t("of type {types}", { types: accept.join(", ") }) : "",
    ].filter(Boolean);
    const drawDone = () => {
      for (const row of progressList.querySelectorAll("li.done")) row.remove();
      for (const item of done) {
        progressList.append(el("li", { className: "done" },
          el("span", { className: "name", text: `${item.name} (${sizeText(item.size)})` }),
          button(t("Remove"), "quiet remove", () => { done.splice(done.indexOf(item), 1); drawDone(); picker.dispatchEvent(new Event("change", { bubbles: true })); })));
      }
    };
    const send = (file) => {
      if (maxBytes !== null && file.size > maxBytes) {
        status.textContent = t("{name} is {size}: larger than {limit}, not sent.", { name: file.name, size: sizeText(file.size), limit: sizeText(maxBytes) });
        return;
      }
      if (max !== null && done.length + busy >= max) {
        status.textContent = max === 1 ? t("At most one file: remove it first.") : t("At most {count} files: remove one first.", { count: max });
        return;
      }
      busy += 1;
      const bar = el("progress", { max: "100", value: "0", "aria-label": t("Uploading {name}", { name: file.name }) });
      const row = el("li", { className: "sending" }, el("span", { className: "name", text: file.name }), bar);
      progressList.append(row);
      const request = new XMLHttpRequest();
      const query = `ask=${encodeURIComponent(ask.id)}&question=${encodeURIComponent(question.id)}&name=${encodeURIComponent(file.name)}`;
      request.open("POST", `upload?${query}`);
      request.setRequestHeader("Content-Type", file.type || "application/octet-stream");
      request.upload.addEventListener("progress", (event) => {
        if (event.lengthComputable) bar.value = Math.round((100 * event.loaded) / event.total);
      });
      const end = (text) => {
        busy -= 1;
        row.remove();
        if (text) status.textContent = text;
      };
      request.addEventListener("load", () => {
        let data = {};
        try { data = JSON.parse(request.responseText); } catch (_) { data = {}; }
        if (request.status === 200 && typeof data.upload === "string") {
          done.push({ upload: data.upload, name: String(data.name), size: Number(data.size) });
          drawDone();
          end(t("{name} uploaded.", { name: file.name }));
          picker.dispatchEvent(new Event("change", { bubbles: true }));
        } else {
          end(t("{name} was not taken: {why}", { name: file.name, why: data.message || `${request.status} ${request.statusText}` }));
        }
      });
      request.addEventListener("error", () => end(t("{name} could not be sent: {server} is unreachable.", { name: file.name, server: SERVER })));
      request.send(file);
    };
    picker.addEventListener("change", (event) => {
      if (!event.isTrusted) return; // our own change events (a draft to save)
      for (const file of picker.files || []) send(file);
      picker.value = "";
    });
    drawDone();
    return {
      nodes: [
        el("label", { className: "field-label", for: fieldId, text: max === 1 ? t("Choose a file to upload") : t("Choose files to upload") }),
        picker,
        el("p", { id: hintId, className: "hint", text: (limits.length ? `${capital(limits.join(", "))}. ` : "") + t("The file goes to your agent's machine; the agent sees its name, type and size.") }),
        status, progressList,
      ],
      read: () => {
        if (busy) return { error: t("Wait until the upload has finished.") };
        if (!done.length) return { error: t("Upload a file, or press Skip.") };
        return { id: question.id, selected: [], value: done.map((item) => ({ upload: item.upload })) };
      },
      snapshot: () => ({ uploads: done }),
      summary: () => done.map((item) => item.name).join(", "),
      focus: () => picker,
    };
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
      node.disabled = busy || state.stale || node.dataset.locked === "1";
    }
  }

  async function send(ask, page, path, body) {
    const card = state.cards.get(ask.id);
    setBusy(card, true);
    clearNotice();
    state.sent.add(ask.id);
    try {
      const { status, data } = await post(path, body);
      if (status === 200) {
        if (path === "answer") {
          // "accepted": the harness has this answer (whatever this page heard meanwhile);
          // "kept": it is the question's answer, stored for a harness not waiting now.
          // "counted": this person's approval of a review that needs more; it stays pending
          // for the others, and this page has nothing more to give it.
          state.sent.delete(ask.id);
          if (state.asks.has(ask.id)) drop(ask.id, true);
          const told = (data.status === "kept" || data.status === "counted") && typeof data.message === "string";
          notice(told ? data.message : OUTCOME_TEXT.answered[0], data.status === "counted" ? "counted" : "answered", ask.id);
        }
        return;
      }
      state.sent.delete(ask.id);
      if (status === 409) {
        notice(data.message || t("That question is no longer pending."), "not-pending", ask.id);
        drop(ask.id, true);
        return;
      } else if (status === 403 && data.status === "refused") {
        // Not for this person (the core's message says whom it is for): nothing was taken.
        notice(data.message || status, "refused", ask.id);
        drop(ask.id, true);
        return;
      } else if (status === 422) {
        page.fail(t("The server refused the answer: {problems}", { problems: (data.problems || []).join("; ") }));
      } else {
        page.fail(t("The server refused: {why}", { why: data.message || (data.problems || []).join("; ") || status }));
      }
    } catch (_) {
      state.sent.delete(ask.id);
      page.fail(t("Could not reach {server}: nothing was sent. Your answer is kept here; send it again once the page reconnects.", { server: SERVER }));
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
    relay({ type: "stale", stale });
    for (const card of state.cards.values()) card.setStale(stale);
    const offline = byId("offline");
    if (stale) {
      offline.textContent = capital(t("{server} is unreachable, so answers cannot be sent. This page keeps trying and updates by itself when {server} is back.", { server: SERVER }));
      offline.hidden = false;
    } else {
      offline.hidden = true;
      offline.textContent = "";
    }
  }

  function onSnapshot(data) {
    state.failures = 0;
    state.synced = true;
    setConnection("open", t("Connected"));
    const before = state.currentId;
    state.asks = new Map(data.pending.map((ask) => [ask.id, ask]));
    queueWhole = true;
    for (const id of [...state.cards.keys()]) {
      if (!state.asks.has(id)) {
        state.cards.delete(id);
        forgetDraft(id);
      }
    }
    setStale(false);
    if (before !== null && !state.asks.has(before)) {
      notice(t("The question you were on was settled while this page was away."), "gone", "");
      state.currentId = null;
      byId("card-slot").replaceChildren();
    }
    ensureCurrent(before === null || !state.asks.has(before));
  }

  function onAdded(ask) {
    if (state.asks.has(ask.id)) return;
    state.asks.set(ask.id, ask);
    if (state.currentId !== null) announce(t("New question {from}. {count} waiting.", { from: agentText(ask).toLowerCase(), count: state.asks.size }));
    ensureCurrent(state.currentId === null);
  }

  // Where an answer or a close came from when it was not a page: the one-question link of a
  // notification, the command line, or another surface named by the server.
  const WHERE = { link: t("through its link from a notification"), cli: t("from the command line") };
  function settledElsewhere(data) {
    if (typeof data.by !== "string" || !data.by || !["answered", "cancelled"].includes(data.outcome)) return null;
    const where = WHERE[data.by] || t("elsewhere ({surface})", { surface: data.by.slice(0, 40) });
    return data.outcome === "answered" ? t("This question was answered {where}.", { where }) : t("This question was closed {where}.", { where });
  }

  function onResolved(data) {
    if (!state.asks.has(data.id)) return;
    if (data.id === state.currentId) {
      const texts = OUTCOME_TEXT[data.outcome] || [t("This question was settled."), t("This question was settled.")];
      const elsewhere = settledElsewhere(data);
      notice(state.sent.has(data.id) ? texts[0] : elsewhere || texts[1], data.outcome, data.id);
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
    notice(t("The question server stopped: {reason}", { reason: data.reason }), "bye", "");
  }

  // ---- one event stream per browser ----
  // A browser opens at most 6 connections to one host; an event stream per tab would lock six
  // tabs out. So the tabs of a browser elect one of them (a Web Lock: the tab holding it, until
  // it closes) to hold the only stream, and it relays every event and status to the others on a
  // BroadcastChannel. Where either API is missing (not a secure context) each tab has its own.
  const SHARED = `dsh-user-questions:${location.pathname}`;
  let channel = null;
  function relay(message) {
    if (state.role === "leader" && channel) channel.postMessage(message);
  }
  const HANDLERS = { snapshot: onSnapshot, added: onAdded, resolved: onResolved, bye: onBye };
  function deliver(name, data) {
    HANDLERS[name](data);
    relay({ type: "event", name, data });
    if (name === "added" && state.role !== "follower") notifyAsk(data);
  }
  function onChannel(message) {
    if (!message || typeof message !== "object") return;
    if (message.type === "hello") {
      // A new tab: give it the current state (events are idempotent, so every tab may get it).
      if (state.role === "leader" && state.synced) {
        relay({ type: "event", name: "snapshot", data: { pending: [...state.asks.values()] } });
        const node = byId("connection");
        relay({ type: "status", kind: node.dataset.state, text: node.textContent });
        relay({ type: "stale", stale: state.stale });
      }
      return;
    }
    if (state.role !== "follower") return;
    if (message.type === "event" && Object.hasOwn(HANDLERS, message.name)) HANDLERS[message.name](message.data);
    else if (message.type === "status") setConnection(message.kind, message.text);
    else if (message.type === "stale") setStale(Boolean(message.stale));
  }

  // ---- notifications, only after the human asked for them ----
  const NOTIFY_KEY = "dsh-user-questions-notify";
  function notifyWanted() {
    try {
      return localStorage.getItem(NOTIFY_KEY) === "1";
    } catch (_) {
      return false;
    }
  }
  function setNotifyWanted(wanted) {
    try {
      localStorage.setItem(NOTIFY_KEY, wanted ? "1" : "0");
    } catch (_) {
      // Storage disabled: the choice lasts as long as the page.
    }
    state.notify = wanted;
  }
  function drawNotify() {
    const node = byId("notify");
    if (typeof Notification !== "function") {
      node.hidden = true;
      return;
    }
    node.hidden = false;
    const permission = Notification.permission;
    const on = permission === "granted" && (state.notify || notifyWanted());
    node.setAttribute("aria-pressed", on ? "true" : "false");
    node.disabled = permission === "denied";
    node.textContent = permission === "denied" ? t("Notifications blocked by the browser") : on ? t("Notifications on") : t("Notify me of new questions");
  }
  function notifyAsk(ask) {
    if (typeof Notification !== "function" || Notification.permission !== "granted") return;
    if (!(state.notify || notifyWanted())) return;
    if (document.visibilityState === "visible" && document.hasFocus()) return; // seen already
    try {
      const note = new Notification(t("A question is waiting for you"), { body: `${agentText(ask)}: ${titleOf(ask)}`, tag: ask.id });
      note.addEventListener("click", () => {
        window.focus();
        if (state.asks.has(ask.id)) select(ask.id, true);
        note.close();
      });
    } catch (_) {
      // A browser that shows notifications only from a service worker: the title still counts.
    }
  }
  byId("notify").addEventListener("click", () => {
    if (Notification.permission === "granted" && (state.notify || notifyWanted())) {
      setNotifyWanted(false);
      return drawNotify();
    }
    Notification.requestPermission().then((permission) => {
      setNotifyWanted(permission === "granted");
      drawNotify();
    }, drawNotify);
  });
  window.addEventListener("storage", (event) => {
    if (event.key === NOTIFY_KEY) {
      state.notify = event.newValue === "1";
      drawNotify();
    }
  });
  state.notify = notifyWanted();
  drawNotify();

  // The page runs its own reconnects (EventSource's would retry for ever without a word), so
  // it can say when the harness is gone: after a few failures the cards go stale.
  let retryTimer = null;
  let watchdog = null;
  function heard() {
    state.lastWord = Date.now();
  }

  // Tell the server this page reads its stream (a stream that does not is dropped).
  function confirmBeat(n) {
    if (state.streamId === null || !Number.isInteger(n)) return;
    fetch("alive", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id: state.streamId, n }),
      credentials: "same-origin",
    }).catch(() => {});
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
    on("snapshot", (data) => {
      state.streamId = typeof data.stream === "string" ? data.stream : null;
      confirmBeat(data.n);
      deliver("snapshot", { pending: data.pending });
    });
    on("added", (data) => deliver("added", data));
    on("resolved", (data) => deliver("resolved", data));
    on("ping", (data) => confirmBeat(data.n));
    on("bye", (data) => deliver("bye", data));
  }

  function failed() {
    if (state.source) state.source.close();
    state.source = null;
    state.failures += 1;
    const connecting = state.synced ? t("Reconnecting\u2026") : t("Connecting\u2026");
    if (state.failures >= RETRIES_BEFORE_UNREACHABLE) {
      // The stream may be refused while the harness is up (too many open tabs): ask once
      // whether it answers at all before calling it unreachable.
      fetch("state", { cache: "no-store", credentials: "same-origin", signal: AbortSignal.timeout(3000) })
        .then((response) => {
          if (!response.ok) throw new Error(String(response.status));
          if (state.failures > 0) setConnection("retrying", `${connecting} (${t("{server} is busy", { server: SERVER })})`);
        })
        .catch(() => {
          if (state.failures === 0) return; // reconnected meanwhile
          setConnection("unreachable", capital(t("{server} unreachable: retrying", { server: SERVER })));
          setStale(true);
        });
    } else {
      setConnection("retrying", connecting);
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

  if (typeof BroadcastChannel === "function" && navigator.locks && typeof navigator.locks.request === "function") {
    state.role = "follower";
    channel = new BroadcastChannel(SHARED);
    channel.addEventListener("message", (event) => onChannel(event.data));
    navigator.locks.request(SHARED, () => {
      state.role = "leader";
      document.body.dataset.role = "leader";
      connect();
      return new Promise(() => {}); // held for the life of this tab
    });
    document.body.dataset.role = "follower";
    channel.postMessage({ type: "hello" });
  } else {
    document.body.dataset.role = "solo";
    connect();
  }
})();
