# The `skyhook` image: the operator (`skyhook operator`) and the node agent (`skyhook agent …`, run by
# the stage Jobs, privileged, with the host's / mounted) from one build of the CLI.
# Build: docker build -t ghcr.io/skyhook-ts/skyhook:0.1.0 .

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
# Scripts off: the `node` dev dependency would download a second Node; this image already has 24.
# For the same reason tsc is started with the image's node, not through node_modules/.bin.
RUN npm ci --ignore-scripts
COPY src ./src
COPY scripts/bundle-operator.ts ./scripts/
# dist/ from tsc, then `skyhook operator` as one tree-shaken file (scripts/bundle-operator.ts: less memory).
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json && node scripts/bundle-operator.ts \
  && npm prune --omit=dev --ignore-scripts

FROM node:24-bookworm-slim
# The agent enters the host with chroot (coreutils) and nsenter (util-linux) to run package steps
# and interrupts (service restarts, reboot).
RUN apt-get update \
  && apt-get install -y --no-install-recommends coreutils util-linux ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY bin ./bin
RUN ln -s /app/bin/skyhook.js /usr/local/bin/skyhook && chmod +x /app/bin/skyhook.js
# Root by default because the agent needs it; the operator's Deployment runs it as UID 65532.
ENTRYPOINT ["skyhook"]
