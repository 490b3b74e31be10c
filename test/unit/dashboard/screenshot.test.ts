import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');
const SCREENSHOT = path.join(ROOT, 'docs', 'dashboard.png');

/**
 * docs/dashboard.png is the page after a night's work, as the resident stack's browser test takes it
 * (SLUICE_UPDATE_DOCS_SCREENSHOT=1 npx jest --selectProjects component --testPathPatterns residentStack): README.md shows it.
 */
test('the dashboard screenshot is a PNG about 1200 pixels wide, small, and README.md shows it', () => {
  const png = readFileSync(SCREENSHOT);
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  // IHDR, the first chunk: width and height, big-endian, at bytes 16 and 20.
  expect(png.readUInt32BE(16)).toBe(1200);
  expect(png.readUInt32BE(20)).toBeLessThanOrEqual(1200);
  expect(statSync(SCREENSHOT).size).toBeLessThan(300 * 1024);
  expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).toMatch(/^!\[[^\]]+\]\(docs\/dashboard\.png\)$/m);
});
