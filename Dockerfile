# exrates: a small, non-root image of the HTTP service and its CLI.
#
#   docker build -t exrates .
#   docker run -p 8080:8080 -v exrates-data:/data -e EXRATES_CONTACT_EMAIL=keys@example.com exrates
#   docker run --rm -v exrates-data:/data exrates keys create --tier free --owner you@example.com
#
# `npm run test:container` builds it and runs it as an operator would (docs/operations.md,
# Containers).

ARG NODE_IMAGE=node:26-bookworm-slim

# --- build: dev dependencies, TypeScript compile, then prune to production dependencies --------
FROM ${NODE_IMAGE} AS build
# Names the untagged image this stage leaves behind with the classic builder, for `docker image
# prune --filter label=exrates.stage=build`.
LABEL exrates.stage=build
WORKDIR /app

COPY package.json package-lock.json ./
# --ignore-scripts: the package's own `prepare` script runs tsc, and the sources are not copied
# yet (this layer is cached until the lockfile changes). better-sqlite3 ships its compiled addon
# for each platform in the package: nothing is compiled.
RUN npm ci --ignore-scripts

COPY tsconfig.json ./
COPY src ./src
COPY scripts/build.mjs ./scripts/
# Compile (tsc, then scripts/build.mjs bundles the command's modules), drop the dev dependencies,
# then what the service never loads: better-sqlite3's SQLite sources (only needed to compile it)
# and its addons for other platforms (it loads prebuilds/<platform>-<arch>.node), the packages'
# TypeScript files (node loads none from node_modules), Markdown and test folders, and every
# source map (node reads none without --enable-source-maps). Then check that the addon loads.
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && find node_modules/better-sqlite3/prebuilds -type f ! -name "$(node -p 'process.platform + "-" + process.arch').node" -delete \
 && find node_modules -type f \( -name '*.ts' -o -name '*.mts' -o -name '*.cts' -o -name '*.map' -o -name '*.md' \) -delete \
 && find dist -type f -name '*.map' -delete \
 && rm -rf node_modules/*/test node_modules/*/tests node_modules/*/docs node_modules/@*/*/test node_modules/@*/*/tests node_modules/@*/*/docs \
 && node -e "const D = require('better-sqlite3'); new D(':memory:').close()"

# --- runtime ---------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    EXRATES_DATABASE_URL=sqlite:/data/exrates.db \
    NODE_COMPILE_CACHE=/app/compile-cache
WORKDIR /app
# The application files stay owned by root (read-only to the service); only /data and Node's
# compile cache are writable.
RUN mkdir -p /data /app/compile-cache && chown node:node /data /app/compile-cache
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

USER node
# One run of the command fills Node's compile cache with the modules every start loads, so that
# the container's first start is as quick as the next ones.
RUN ["/app/dist/cli/main.js", "--version"]
VOLUME ["/data"]
EXPOSE 8080

# Liveness only (/healthz answers while the process runs); load balancers should use /readyz.
# The slim image has no curl: Node's fetch does the request.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# node is PID 1 and receives SIGTERM itself: `serve` drains in-flight requests and exits.
ENTRYPOINT ["/app/dist/cli/main.js"]
CMD ["serve"]
