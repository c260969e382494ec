# The chat node image (and the development IdP: same image, `node dist/idp/main.mjs`).
# docker-compose.cluster.yml builds it; docs/deploy.md describes the deployment.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 is native: npm normally fetches a prebuilt binary; these build it when none fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# The project's .npmrc points node-gyp at /usr (the development machine); Node headers live
# under /usr/local in this image, and the environment overrides a project .npmrc.
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json .npmrc ./
# npm ci's postinstall raises uWebSockets' header-section limit (scripts/uws-header-limit.mjs).
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY schema ./schema
# The web app (web/, with its typed API client in client/), built by npm run build into dist/web.
COPY web ./web
COPY client ./client
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Read at run time: Redis Lua scripts and the demo fixture under src/, migrations under schema/.
COPY --from=build /app/src ./src
COPY --from=build /app/schema ./schema
RUN mkdir -p /var/lib/chat /var/lib/idp && chown node:node /var/lib/chat /var/lib/idp
USER node
ENV CHAT_HOST=0.0.0.0 CHAT_DATA_DIR=/var/lib/chat
# 8080 API, 8090 node-to-node (CHAT_INTERNAL_PORT), 9464 metrics, 8081 when running the IdP.
EXPOSE 8080 8090 9464 8081
CMD ["node", "--enable-source-maps", "dist/main.mjs"]
