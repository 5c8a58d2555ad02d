# syntax=docker/dockerfile:1
# wsmirror in a container.
#   docker build -t wsmirror .
#   docker run -d --name wsmirror -v wsmirror-data:/data -p 9464:9464 \
#     -v /etc/wsmirror/api-key:/run/secrets/wsmirror-api-key:ro \
#     -e WSMIRROR_BASE_URL=https://workspace.example.com -e WSMIRROR_WORKSPACE_ID=demo00000001 \
#     -e WSMIRROR_API_KEY_FILE=/run/secrets/wsmirror-api-key wsmirror
# The key file is mounted read-only where WSMIRROR_API_KEY_FILE points; one that other users can
# read still works, with a warning in the log, so on the host: chown 1000 /etc/wsmirror/api-key &&
# chmod 600 it (1000 is the image's user, node). With Compose or Swarm, a secret named wsmirror-api-key lands at the same
# path. /data is the working directory: it holds the SQLite mirror (sqlite:./wsmirror.db) and is
# where a wsmirror.yaml is looked for. Other commands: docker run --rm -v wsmirror-data:/data wsmirror status

# Dependencies only, without dev tools. better-sqlite3 ships prebuilt binaries: no compiler needed.
# The image's Node runs wsmirror: --omit=optional leaves out the Node.js that package.json brings
# for machines without a recent one (bin/wsmirror then takes the `node` on PATH). No scripts: the
# only one, the bundle's build, needs the sources and runs in the next stage.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

# The bundle bin/wsmirror starts from (bin/bundle.mjs, DEVELOPERS.md): built where esbuild's
# binary, an optional dependency, is installed. COPY keeps the files' modification times, which
# is what tells bin/wsmirror that the bundle is not older than the sources.
FROM node:24-slim AS bundle
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY bin ./bin
COPY src ./src
RUN node bin/bundle.mjs && test -f node_modules/.cache/wsmirror-bundle/manifest.json

FROM node:24-slim
ENV NODE_ENV=production
# Published ports reach the container's interface, not its loopback (wsmirror's default).
# Variables win over the configuration file: this one overrides http.host in /data/wsmirror.yaml;
# to listen elsewhere, pass -e WSMIRROR_HTTP_HOST=… instead.
ENV WSMIRROR_HTTP_HOST=0.0.0.0
# Bounds the daemon's memory (see systemd/wsmirror.service and bench/README.md).
ENV NODE_OPTIONS="--max-old-space-size=160 --max-semi-space-size=2"
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=bundle /app/node_modules/.cache/wsmirror-bundle ./node_modules/.cache/wsmirror-bundle
COPY package.json package-lock.json ./
COPY bin ./bin
COPY src ./src
COPY config ./config
RUN mkdir /data && chown node:node /data
WORKDIR /data
VOLUME ["/data"]
# The image's unprivileged user.
USER node
EXPOSE 9464
# Liveness only (/healthz); /readyz is for load balancers and monitors. It probes the port of
# WSMIRROR_HTTP_PORT (9464 when unset) and reads no configuration file: set a port of your own with
# -e WSMIRROR_HTTP_PORT, not http.port in wsmirror.yaml, and with the port 0 (endpoints off) run
# the container with --no-healthcheck.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.WSMIRROR_HTTP_PORT || 9464) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM: the running cycle commits, then the process exits 0 (give `docker stop -t 120` room).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/app/bin/wsmirror"]
CMD ["run"]
