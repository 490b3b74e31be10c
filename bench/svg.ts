/** Small hand-written SVG charts for the benchmark (no dependencies). */

const FONT = 'font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif"';
const COLORS = {
  sluice: '#1f77b4',
  batches: '#d62728',
  poller: '#ff7f0e',
  backoff: '#9467bd',
  grid: '#e5e5e5',
  axis: '#555',
  text: '#222',
} as const;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (x: number) =>
  (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)).replace(/\.0+$/, '').replace(/(\.\d*?)0+$/, '$1');

function niceStep(range: number, ticks: number): number {
  const raw = range / Math.max(1, ticks);
  const mag = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
}

export interface ConcurrencyPanel {
  name: string;
  color?: string;
  /** ms from the first start, runs in progress after the change */
  timeline: Array<{ t: number; n: number }>;
  caption: string;
}

/** Runs in progress over time, one panel per scheduler, on the same time axis, with the limit drawn. */
export function concurrencyChart(panels: ConcurrencyPanel[], limit: number, title: string): string {
  const width = 900;
  const panelH = 120;
  const left = 60;
  const right = 20;
  const top = 40;
  const gap = 34;
  const bottom = 56;
  const height = top + panels.length * (panelH + gap) + bottom - gap;
  const maxT = Math.max(1, ...panels.map((p) => p.timeline[p.timeline.length - 1]?.t ?? 0));
  const maxN = Math.max(limit + 1, ...panels.flatMap((p) => p.timeline.map((x) => x.n)));
  const x = (t: number) => left + (t / maxT) * (width - left - right);
  const xStep = niceStep(maxT / 1000, 10);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="600" fill="${COLORS.text}">${esc(title)}</text>`,
  ];
  panels.forEach((panel, i) => {
    const y0 = top + i * (panelH + gap) + 14;
    const y = (n: number) => y0 + panelH - (n / maxN) * panelH;
    const color = panel.color ?? (COLORS as Record<string, string>)[panel.name] ?? '#333';
    out.push(`<text x="${left}" y="${y0 - 4}" font-weight="600" fill="${color}">${esc(panel.name)}</text>`);
    out.push(`<text x="${width - right}" y="${y0 - 4}" text-anchor="end" fill="${COLORS.axis}">${esc(panel.caption)}</text>`);
    for (let s = 0; s <= maxT / 1000; s += xStep)
      out.push(`<line x1="${x(s * 1000)}" x2="${x(s * 1000)}" y1="${y0}" y2="${y0 + panelH}" stroke="${COLORS.grid}"/>`);
    for (let n = 0; n <= maxN; n += Math.max(1, Math.round(maxN / 4))) {
      out.push(`<line x1="${left}" x2="${width - right}" y1="${y(n)}" y2="${y(n)}" stroke="${COLORS.grid}"/>`);
      out.push(`<text x="${left - 6}" y="${y(n) + 4}" text-anchor="end" fill="${COLORS.axis}">${n}</text>`);
    }
    out.push(`<line x1="${left}" x2="${width - right}" y1="${y(limit)}" y2="${y(limit)}" stroke="#000" stroke-dasharray="5 4"/>`);
    out.push(`<text x="${width - right - 4}" y="${y(limit) - 4}" text-anchor="end" fill="#000">limit ${limit}</text>`);
    let d = '';
    let prevN = 0;
    for (const point of panel.timeline) {
      d += d === '' ? `M${x(point.t).toFixed(1)},${y(point.n).toFixed(1)}` : `H${x(point.t).toFixed(1)}V${y(point.n).toFixed(1)}`;
      prevN = point.n;
    }
    if (prevN !== 0) d += `V${y(0).toFixed(1)}`;
    out.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="1.5"/>`);
    out.push(`<line x1="${left}" x2="${width - right}" y1="${y(0)}" y2="${y(0)}" stroke="${COLORS.axis}"/>`);
  });
  const axisY = top + panels.length * (panelH + gap) - gap + 14;
  for (let s = 0; s <= maxT / 1000; s += xStep)
    out.push(`<text x="${x(s * 1000)}" y="${axisY + 16}" text-anchor="middle" fill="${COLORS.axis}">${fmt(s)}</text>`);
  out.push(
    `<text x="${(left + width - right) / 2}" y="${axisY + 32}" text-anchor="middle" fill="${COLORS.axis}">seconds since the first start (compressed time)</text>`,
  );
  out.push('</svg>');
  return out.join('\n');
}

export interface Series {
  name: string;
  color: string;
  points: Array<{ x: number; y: number }>;
  dashed?: boolean;
  /** Label each point with its value. */
  labels?: boolean;
}

/** Lines over a log-scale x axis (backlog), linear or log y. */
export function logXChart(
  series: Series[],
  o: { title: string; xLabel: string; yLabel: string; logY?: boolean; notes?: string[] },
): string {
  const notes = o.notes ?? [];
  const width = 960;
  const height = 440 + notes.length * 16;
  const left = 70;
  const right = 250;
  const top = 44;
  const bottom = 70 + notes.length * 16;
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const ys = series.flatMap((s) => s.points.map((p) => p.y)).filter((v) => v > 0);
  const x0 = Math.floor(Math.log10(Math.min(...xs)));
  const x1 = Math.ceil(Math.log10(Math.max(...xs)));
  const yMax = Math.max(...ys);
  const y0l = o.logY ? Math.floor(Math.log10(Math.min(...ys))) : 0;
  const y1l = o.logY ? Math.ceil(Math.log10(yMax)) : 0;
  const yStep = niceStep(yMax, 6);
  const yTop = o.logY ? 0 : Math.ceil((yMax * 1.1) / yStep) * yStep;
  const px = (v: number) => left + ((Math.log10(v) - x0) / Math.max(1, x1 - x0)) * (width - left - right);
  const py = (v: number) =>
    o.logY
      ? top + (1 - (Math.log10(Math.max(v, 10 ** y0l)) - y0l) / Math.max(1, y1l - y0l)) * (height - top - bottom)
      : top + (1 - v / yTop) * (height - top - bottom);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ${FONT} font-size="12">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${left}" y="24" font-size="15" font-weight="600" fill="${COLORS.text}">${esc(o.title)}</text>`,
  ];
  for (let e = x0; e <= x1; e++) {
    out.push(`<line x1="${px(10 ** e)}" x2="${px(10 ** e)}" y1="${top}" y2="${height - bottom}" stroke="${COLORS.grid}"/>`);
    out.push(
      `<text x="${px(10 ** e)}" y="${height - bottom + 18}" text-anchor="middle" fill="${COLORS.axis}">${(10 ** e).toLocaleString('en-US')}</text>`,
    );
  }
  const yTicks = o.logY
    ? Array.from({ length: y1l - y0l + 1 }, (_, i) => 10 ** (y0l + i))
    : Array.from({ length: Math.round(yTop / yStep) + 1 }, (_, i) => i * yStep);
  for (const v of yTicks) {
    out.push(`<line x1="${left}" x2="${width - right}" y1="${py(v)}" y2="${py(v)}" stroke="${COLORS.grid}"/>`);
    out.push(`<text x="${left - 6}" y="${py(v) + 4}" text-anchor="end" fill="${COLORS.axis}">${fmt(v)}</text>`);
  }
  out.push(`<line x1="${left}" x2="${width - right}" y1="${height - bottom}" y2="${height - bottom}" stroke="${COLORS.axis}"/>`);
  out.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${height - bottom}" stroke="${COLORS.axis}"/>`);
  out.push(
    `<text x="${(left + width - right) / 2}" y="${height - bottom + 38}" text-anchor="middle" fill="${COLORS.axis}">${esc(o.xLabel)}</text>`,
  );
  out.push(
    `<text transform="translate(18 ${(top + height - bottom) / 2}) rotate(-90)" text-anchor="middle" fill="${COLORS.axis}">${esc(o.yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const d = s.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join('');
    out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`);
    s.points.forEach((p, j) => {
      out.push(`<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="${s.dashed ? 2.5 : 4}" fill="${s.color}"/>`);
      // The first label starts right of its point, clear of the y axis.
      const [lx, anchor] = j === 0 ? [px(p.x) + 7, 'start'] : [px(p.x), 'middle'];
      if (s.labels)
        out.push(`<text x="${lx.toFixed(1)}" y="${(py(p.y) - 9).toFixed(1)}" text-anchor="${anchor}" fill="${s.color}">${fmt(p.y)}</text>`);
    });
    const ly = top + 10 + i * 20;
    out.push(
      `<line x1="${width - right + 14}" x2="${width - right + 38}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>`,
    );
    out.push(`<text x="${width - right + 44}" y="${ly + 4}" fill="${COLORS.text}">${esc(s.name)}</text>`);
  });
  notes.forEach((line, i) =>
    out.push(`<text x="${left}" y="${height - 12 - (notes.length - 1 - i) * 16}" fill="${COLORS.axis}" font-size="11">${esc(line)}</text>`),
  );
  out.push('</svg>');
  return out.join('\n');
}
