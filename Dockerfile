# lab and the PostgreSQL tools it drives, in one image (Debian 12: PostgreSQL
# 15, PgBouncer, pgpool-II):
#   docker build -t lab .
#   docker run --rm lab                       # lab all, on a throwaway PostgreSQL inside
#   docker run --rm -e DATABASE_URL=postgres://user:pw@host/db lab all --require pooler
#   docker run --rm lab man | man -l -
# tests/lab/ci.rs reads this file (no Docker engine runs there): the Rust it
# builds with meets lab's rust-version, the packages are the ones lab tells a
# person to install, every lab command in it is one lab accepts.
FROM rust:1.88-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
 && install -D target/release/lab /out/usr/bin/lab \
 && mkdir -p /out/usr/share/bash-completion/completions /out/usr/share/zsh/vendor-completions /out/usr/share/fish/vendor_completions.d \
 && /out/usr/bin/lab man --dir /out/usr/share/man/man1 \
 && /out/usr/bin/lab completions bash > /out/usr/share/bash-completion/completions/lab \
 && /out/usr/bin/lab completions zsh > /out/usr/share/zsh/vendor-completions/_lab \
 && /out/usr/bin/lab completions fish > /out/usr/share/fish/vendor_completions.d/lab.fish

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql pgbouncer pgpool2 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/ /
ENTRYPOINT ["lab"]
CMD ["all"]
