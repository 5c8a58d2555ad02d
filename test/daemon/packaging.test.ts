import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_KEYS } from '../../src/daemon/config-variables.ts';
import { listenHttpServer } from '../../src/daemon/http-server.ts';
import { loadConfig, resolveConfig } from '../../src/daemon/load-config.ts';
import { Metrics } from '../../src/daemon/metrics.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, 'utf8');

describe('config/wsmirror.example.yaml', () => {
  const text = read('config/wsmirror.example.yaml');

  it('documents every key, each with its environment variable, and nothing else', () => {
    const parsed = parse(text) as Record<string, Record<string, unknown>>;
    const inFile = Object.entries(parsed).flatMap(([section, keys]) => Object.keys(keys).map((key) => `${section}.${key}`));
    expect(inFile).toEqual(CONFIG_KEYS.map((k) => k.path));
    const lines = text.split('\n');
    for (const key of CONFIG_KEYS) {
      const at = lines.findIndex(
        (line, i) => line === `  ${key.key}:` || line.startsWith(`  ${key.key}: `) ? sectionOf(lines, i) === key.section : false,
      );
      expect(at, key.path).toBeGreaterThan(0);
      let comment = '';
      for (let i = at - 1; i >= 0 && lines[i]!.trim().startsWith('#'); i--) comment = `${lines[i]}\n${comment}`;
      expect(comment, key.path).toContain(`# env: ${key.env}\n`);
    }
  });

  it('states the real defaults', () => {
    const fromExample = loadConfig({ file: `${root}config/wsmirror.example.yaml`, env: {}, cwd: root, upstream: 'optional' });
    const defaults = resolveConfig({}, { env: {}, cwd: root, upstream: 'optional' });
    // The same values; only where the mirror URL and the table lists were set differs.
    expect({
      ...fromExample,
      configFile: null,
      mirror: { ...fromExample.mirror, urlSource: 'default' },
      tables: { ...fromExample.tables, sources: { include: 'default', exclude: 'default' } },
    }).toEqual(defaults);
  });
});

function sectionOf(lines: string[], index: number): string {
  for (let i = index; i >= 0; i--) {
    const match = /^([a-z]+):\s*$/.exec(lines[i]!);
    if (match) return match[1]!;
  }
  return '';
}

describe('systemd/wsmirror.service', () => {
  const settings = new Map<string, string[]>();
  for (const line of read('systemd/wsmirror.service').split('\n')) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (match) settings.set(match[1]!, [...(settings.get(match[1]!) ?? []), match[2]!]);
  }
  const get = (key: string) => settings.get(key)?.at(-1);

  it('is hardened and takes the key as a credential', () => {
    expect(get('DynamicUser')).toBe('yes');
    expect(get('ProtectSystem')).toBe('strict');
    expect(get('StateDirectory')).toBe('wsmirror');
    expect(get('WorkingDirectory')).toBe('/var/lib/wsmirror');
    expect(get('NoNewPrivileges')).toBe('yes');
    expect(get('PrivateTmp')).toBe('yes');
    expect(get('ProtectHome')).toBe('yes');
    expect(get('CapabilityBoundingSet')).toBe('');
    expect(get('LoadCredential')).toMatch(/^wsmirror-api-key:\//);
    // V8 needs writable+executable memory: this setting would crash Node at start.
    expect(get('MemoryDenyWriteExecute')).not.toBe('yes');
  });

  it('runs the daemon, stops it with SIGTERM and restarts it only when a restart can help', () => {
    expect(get('ExecStart')).toMatch(/\/bin\/wsmirror run( |$)/);
    expect(get('KillSignal')).toBe('SIGTERM');
    expect(get('Restart')).toBe('on-failure');
    expect(get('RestartPreventExitStatus')).toBe('78');
    // A WSMIRROR_* variable here would silently override the config file.
    expect(read('systemd/wsmirror.service')).not.toMatch(/^Environment=.*WSMIRROR_/m);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .filter((line) => /^[A-Z]+\s/.test(line));
  const all = (name: string) => instructions.filter((line) => line.startsWith(`${name} `)).map((line) => line.slice(name.length + 1));

  it('builds in three stages on node:24-slim and runs unprivileged', () => {
    expect(all('FROM')).toEqual(['node:24-slim AS deps', 'node:24-slim AS bundle', 'node:24-slim']);
    // The image's Node runs wsmirror, not the one package.json brings as an optional dependency.
    expect(all('RUN')).toContain('npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund');
    // The bundle bin/wsmirror starts from (DEVELOPERS.md), built where esbuild's binary is.
    expect(all('RUN').some((run) => run.startsWith('node bin/bundle.mjs'))).toBe(true);
    expect(all('COPY')).toContain('--from=bundle /app/node_modules/.cache/wsmirror-bundle ./node_modules/.cache/wsmirror-bundle');
    expect(all('USER')).toEqual(['node']);
    expect(all('VOLUME')).toEqual(['["/data"]']);
    expect(all('ENTRYPOINT')).toEqual(['["/app/bin/wsmirror"]']);
    expect(all('CMD')).toEqual(['["run"]']);
    // A published port reaches the container's interface, not the loopback wsmirror defaults to.
    expect(all('ENV')).toContain('WSMIRROR_HTTP_HOST=0.0.0.0');
  });

  it('copies only what exists and what .dockerignore lets through', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    for (const copy of all('COPY').filter((c) => !c.startsWith('--from'))) {
      const sources = copy.split(/\s+/).slice(0, -1);
      for (const source of sources) {
        expect(existsSync(`${root}${source}`), source).toBe(true);
        expect(ignored, source).not.toContain(source);
      }
    }
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.git', '*.db', 'wsmirror.yaml']));
  });

  it('has a health check that passes against /healthz and fails without it', async () => {
    const healthcheck = all('HEALTHCHECK')[0] ?? '';
    const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
    expect(command.slice(0, 2)).toEqual(['node', '-e']);
    const server = await listenHttpServer('127.0.0.1', 0, {
      metrics: new Metrics({ processMetrics: false }),
      readiness: () => ({ ready: false }),
    });
    try {
      expect(await runNode(command[2]!, { WSMIRROR_HTTP_PORT: String(server.port) })).toBe(0);
    } finally {
      await server.close();
    }
    expect(await runNode(command[2]!, { WSMIRROR_HTTP_PORT: String(server.port) })).toBe(1);
  });
});

function runNode(code: string, env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code], { env: { ...process.env, ...env }, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (status) => resolve(status));
  });
}

describe('memory bound of the packaged daemon', () => {
  const unit = read('systemd/wsmirror.service');
  const dockerfile = read('Dockerfile');

  it('the systemd unit and the image start Node with the same heap bounds', () => {
    const fromUnit = /^Environment="NODE_OPTIONS=([^"]+)"$/m.exec(unit)?.[1];
    const fromImage = /^ENV NODE_OPTIONS="([^"]+)"$/m.exec(dockerfile)?.[1];
    expect(fromUnit).toMatch(/--max-old-space-size=\d+/);
    expect(fromImage).toBe(fromUnit);
  });

  it('node accepts those options', async () => {
    const options = /^Environment="NODE_OPTIONS=([^"]+)"$/m.exec(unit)![1]!;
    const child = spawn(process.execPath, ['-e', 'process.exit(0)'], { env: { ...process.env, NODE_OPTIONS: options }, stdio: 'ignore' });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
  });
});
