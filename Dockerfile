# The Sanguo server: `sanguo serve` on 0.0.0.0:8080. Build from the repository root:
#   docker build -t sanguo .
# Postgres comes from DATABASE_URL (see docker-compose.yml); without it, a SQLite file in /data.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p server --bin sanguo

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --home /data --create-home sanguo
COPY --from=build /src/target/release/sanguo /usr/local/bin/sanguo
USER sanguo
WORKDIR /data
ENV SANGUO_LISTEN=0.0.0.0:8080 \
    SANGUO_SQLITE=/data/sanguo.sqlite \
    RUST_LOG=info
EXPOSE 8080
HEALTHCHECK --interval=5s --timeout=3s --retries=10 CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["sanguo", "serve"]
