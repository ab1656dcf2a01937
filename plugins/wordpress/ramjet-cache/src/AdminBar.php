<?php
/**
 * AdminBar: this site's hit ratio, "Purge this page" and "Purge all" in the toolbar.
 *
 * @package RamjetCache
 */

namespace Ramjet\Cache;

/**
 * Adds a Ramjet menu to the admin bar for users who can manage options,
 * with the site's hit ratio over the last hour and how many URLs were not
 * cached (a link to the dashboard widget that says why), and handles its
 * purge links (admin-post.php, nonce-checked), then returns to the page
 * they came from.
 */
class AdminBar {

	/** admin-post.php action. */
	const ACTION = 'ramjet_cache_purge';

	/**
	 * Purge collector.
	 *
	 * @var Purge
	 */
	private $purge;

	/**
	 * Tags.
	 *
	 * @var Tags
	 */
	private $tags;

	/**
	 * This site's stats.
	 *
	 * @var SiteStats
	 */
	private $stats;

	/**
	 * An admin bar menu showing $stats and purging through $purge.
	 *
	 * @param Purge     $purge Purge collector.
	 * @param Tags      $tags  Tags.
	 * @param SiteStats $stats Site stats.
	 */
	public function __construct( Purge $purge, Tags $tags, SiteStats $stats ) {
		$this->purge = $purge;
		$this->tags  = $tags;
		$this->stats = $stats;
	}

	/**
	 * Hooks into WordPress.
	 */
	public function register() {
		add_action( 'admin_bar_menu', array( $this, 'menu' ), 100 );
		add_action( 'admin_post_' . self::ACTION, array( $this, 'handle' ) );
	}

	/**
	 * Adds the menu.
	 *
	 * @param \WP_Admin_Bar $bar Admin bar.
	 */
	public function menu( $bar ) {
		if ( ! current_user_can( 'manage_options' ) ) {
			return;
		}
		$bar->add_node(
			array(
				'id'    => 'ramjet-cache',
				'title' => esc_html__( 'Ramjet', 'ramjet-cache' ),
			)
		);
		$this->stats_nodes( $bar );
		if ( ! is_admin() ) {
			$bar->add_node(
				array(
					'parent' => 'ramjet-cache',
					'id'     => 'ramjet-cache-purge-page',
					'title'  => esc_html__( 'Purge this page', 'ramjet-cache' ),
					'href'   => $this->link( 'page', home_url( add_query_arg( array() ) ) ),
				)
			);
		}
		$bar->add_node(
			array(
				'parent' => 'ramjet-cache',
				'id'     => 'ramjet-cache-purge-all',
				'title'  => esc_html__( 'Purge all', 'ramjet-cache' ),
				'href'   => $this->link( 'all', '' ),
			)
		);
	}

	/**
	 * Adds the site's hit ratio to the menu's title, and its numbers as
	 * entries, when ramjet answers.
	 *
	 * @param \WP_Admin_Bar $bar Admin bar.
	 */
	private function stats_nodes( $bar ) {
		if ( ! $this->stats->configured() ) {
			return;
		}
		$s = $this->stats->get();
		if ( is_wp_error( $s ) ) {
			return;
		}
		$ratio = SiteStats::percent( $s['hour']['hit_ratio'] );
		$bar->add_node(
			array(
				'id'    => 'ramjet-cache',
				'title' => esc_html( __( 'Ramjet', 'ramjet-cache' ) . ' ' . $ratio ),
			)
		);
		$bar->add_node(
			array(
				'parent' => 'ramjet-cache',
				'id'     => 'ramjet-cache-ratio',
				'title'  => esc_html(
					sprintf(
						/* translators: 1: hit ratio, 2: requests */
						__( 'Hit ratio %1$s of %2$s requests (last hour)', 'ramjet-cache' ),
						$ratio,
						number_format_i18n( $s['hour']['requests'] )
					)
				),
				'href'   => admin_url( 'index.php#ramjet_cache_status' ),
			)
		);
		$uncached = isset( $s['uncached'] ) ? count( $s['uncached'] ) : 0;
		$bar->add_node(
			array(
				'parent' => 'ramjet-cache',
				'id'     => 'ramjet-cache-uncached',
				'title'  => esc_html(
					sprintf(
						/* translators: %s: number of URLs */
						_n( 'Why not cached: %s URL', 'Why not cached: %s URLs', $uncached, 'ramjet-cache' ),
						number_format_i18n( $uncached )
					)
				),
				'href'   => admin_url( 'index.php#ramjet_cache_status' ),
			)
		);
	}

	/**
	 * A nonce-protected purge link.
	 *
	 * @param string $scope "page" or "all".
	 * @param string $url   Page URL for "page".
	 * @return string
	 */
	public function link( $scope, $url ) {
		$args = array(
			'action' => self::ACTION,
			'scope'  => $scope,
		);
		if ( '' !== $url ) {
			$args['url'] = rawurlencode( $url );
		}
		return wp_nonce_url( add_query_arg( $args, admin_url( 'admin-post.php' ) ), self::ACTION );
	}

	/**
	 * Handles a purge link, then redirects back.
	 */
	public function handle() {
		if ( ! current_user_can( 'manage_options' ) ) {
			wp_die( esc_html__( 'You may not purge the cache.', 'ramjet-cache' ), 403 );
		}
		check_admin_referer( self::ACTION );
		$scope = isset( $_GET['scope'] ) ? sanitize_key( wp_unslash( $_GET['scope'] ) ) : '';
		$url   = isset( $_GET['url'] ) ? esc_url_raw( rawurldecode( wp_unslash( $_GET['url'] ) ) ) : ''; // phpcs:ignore WordPress.Security.ValidatedSanitizedInput.InputNotSanitized -- esc_url_raw sanitizes.
		if ( 'page' === $scope && '' !== $url ) {
			$this->purge->add_url( $url );
			$back = $url;
		} else {
			$this->purge->add_tags( array( $this->tags->site() ) );
			$back = wp_get_referer() ? wp_get_referer() : admin_url();
		}
		wp_safe_redirect( $back );
		exit;
	}
}
