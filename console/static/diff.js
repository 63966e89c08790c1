// A small word diff (longest common subsequence over words and the whitespace between
// them), falling back to a line diff for long texts, for showing how a prompt changed.

const MAX_CELLS = 4e6; // the LCS table's size limit (n × m)

/** tokens splits text into words and the runs of whitespace between them. */
export function tokens(text) {
  return text.split(/(\s+)/).filter((t) => t !== '');
}

/** lines splits text into lines, each with its newline. */
export function lines(text) {
  return text.match(/[^\n]*\n|[^\n]+$/g) || [];
}

/**
 * diffTokens returns the edit script turning a into b as [{op, text}] with op '=' (kept),
 * '-' (removed from a) or '+' (added in b); runs of one op are merged.
 */
export function diffTokens(a, b) {
  // Common prefix and suffix first: prompts usually change in one place.
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  const A = a.slice(p, a.length - s);
  const B = b.slice(p, b.length - s);
  const ops = [];
  const push = (op, text) => {
    const last = ops[ops.length - 1];
    if (last && last.op === op) last.text += text;
    else ops.push({ op, text });
  };
  a.slice(0, p).forEach((t) => push('=', t));
  if (A.length * B.length > MAX_CELLS) {
    A.forEach((t) => push('-', t));
    B.forEach((t) => push('+', t));
  } else {
    // L[i][j] = LCS length of A[i:] and B[j:].
    const n = A.length, m = B.length;
    const L = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        L[i][j] = A[i] === B[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
      }
    }
    let i = 0, j = 0;
    while (i < n && j < m) {
      if (A[i] === B[j]) { push('=', A[i]); i++; j++; }
      else if (L[i + 1][j] >= L[i][j + 1]) push('-', A[i++]);
      else push('+', B[j++]);
    }
    while (i < n) push('-', A[i++]);
    while (j < m) push('+', B[j++]);
  }
  a.slice(a.length - s).forEach((t) => push('=', t));
  return ops;
}

/** diffText diffs two texts by words, or by lines when a word diff would be too large. */
export function diffText(a, b) {
  const ta = tokens(a), tb = tokens(b);
  if (ta.length * tb.length <= MAX_CELLS) return diffTokens(ta, tb);
  return diffTokens(lines(a), lines(b));
}

/** renderDiff returns a <pre class="diff"> showing ops with <ins> and <del>. */
export function renderDiff(ops) {
  const pre = document.createElement('pre');
  pre.className = 'diff';
  for (const { op, text } of ops) {
    if (op === '=') pre.append(text);
    else {
      const e = document.createElement(op === '+' ? 'ins' : 'del');
      e.textContent = text;
      pre.append(e);
    }
  }
  return pre;
}

/** diffStats counts the words added and removed. */
export function diffStats(ops) {
  let added = 0, removed = 0;
  for (const { op, text } of ops) {
    const n = tokens(text).filter((t) => !/^\s+$/.test(t)).length;
    if (op === '+') added += n;
    if (op === '-') removed += n;
  }
  return { added, removed };
}
