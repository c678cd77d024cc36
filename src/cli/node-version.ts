/**
 * The Node.js versions the service runs on, checked before anything else loads: on an older one
 * the first import that needs a newer Node would fail with a SyntaxError naming neither the
 * version nor the way out. Written without imports or syntax newer than Node 12 reads, so that the
 * check itself runs where the rest cannot.
 */

/** package.json's `engines.node`; a test keeps the two equal. */
export const SUPPORTED_NODE = '^22.12 || ^24 || >=26';

/** Whether a version (`22.12.0`, `v24.1.0`) is one SUPPORTED_NODE admits. */
export function isSupportedNode(version: string): boolean {
  const [major = NaN, minor = NaN] = version.replace(/^v/, '').split('.').map(Number);
  if (major === 22) return minor >= 12;
  return major === 24 || major >= 26;
}

/** The one line to print on an unsupported version, or undefined on a supported one. */
export function unsupportedNodeLine(version: string): string | undefined {
  if (isSupportedNode(version)) return undefined;
  return `exrates: Node.js ${version.replace(/^v/, '')} is not supported; exrates needs Node.js 22.12 or later 22.x, 24.x, or 26 and later (${SUPPORTED_NODE}): install one from https://nodejs.org/en/download or with a version manager (for example \`nvm install 24\`)`;
}
